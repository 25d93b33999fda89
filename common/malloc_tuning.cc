#include "common/malloc_tuning.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace lmtrain {

bool TuneMallocForTraining() {
  const char* opt_out = std::getenv("LMTRAIN_MALLOC_TUNING");
  if (opt_out != nullptr && std::strcmp(opt_out, "0") == 0) return false;
  for (const char* name :
       {"MALLOC_MMAP_MAX_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_"}) {
    if (std::getenv(name) != nullptr) return false;
  }
#ifdef __GLIBC__
  // M_TRIM_THRESHOLD takes an int: the largest one means "never trim".
  return mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, 0x7fffffff) == 1;
#else
  return false;
#endif
}

}  // namespace lmtrain
