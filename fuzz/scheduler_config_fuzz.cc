// lm-server's --scheduler-config file (server/scheduler_config.h).
#include <cstdint>
#include <string>

#include "server/scheduler_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)lmtrain::ParseSchedulerConfig(text, "scheduler.yaml");
  return 0;
}
