#include "worker/trainer_base/process_memory_probe.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

namespace lmtrain {

int64_t ProcessMemoryProbe::HostResident() {
  std::ifstream statm("/proc/self/statm");
  int64_t size_pages = 0, resident_pages = 0;
  if (!(statm >> size_pages >> resident_pages)) return 0;
  return resident_pages * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

bool ProcessMemoryProbe::ResetHostPeak() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";
  clear_refs.flush();
  return static_cast<bool>(clear_refs);
}

int64_t ProcessMemoryProbe::HostPeak() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) {
      // "VmHWM:    123456 kB"; never below the resident set read now.
      return std::max<int64_t>(std::strtoll(line.c_str() + 6, nullptr, 10) * 1024, HostResident());
    }
  }
  return HostResident();
}

}  // namespace lmtrain
