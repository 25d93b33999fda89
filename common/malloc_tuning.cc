#include "common/malloc_tuning.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace lmtrain {

namespace {

// False when the user chose glibc's settings (see the header).
bool TuningAllowed() {
  const char* opt_out = std::getenv("LMTRAIN_MALLOC_TUNING");
  if (opt_out != nullptr && std::strcmp(opt_out, "0") == 0) return false;
  for (const char* name : {"MALLOC_MMAP_MAX_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_",
                           "MALLOC_TOP_PAD_"}) {
    if (std::getenv(name) != nullptr) return false;
  }
  return true;
}

}  // namespace

bool TuneMallocForServer() {
  if (!TuningAllowed()) return false;
#ifdef __GLIBC__
  return mallopt(M_TRIM_THRESHOLD, 0x7fffffff) == 1 && mallopt(M_TOP_PAD, 16 << 20) == 1;
#else
  return false;
#endif
}

bool TuneMallocForTraining() {
  if (!TuningAllowed()) return false;
#ifdef __GLIBC__
  // M_TRIM_THRESHOLD takes an int: the largest one means "never trim".
  return mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, 0x7fffffff) == 1;
#else
  return false;
#endif
}

}  // namespace lmtrain
