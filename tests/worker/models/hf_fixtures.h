// Where shared/fixtures/hf-tiny lies (torch-free, so tests that only run programs on the
// fixtures can find them too).
#pragma once

#include <cstdlib>
#include <string>

#include "tests/test_paths.h"

namespace lmtrain::testing {

// $LMTRAIN_FIXTURES_DIR, else <source>/../shared/fixtures/hf-tiny.
inline std::string HfFixturesRoot() {
  if (const char* dir = std::getenv("LMTRAIN_FIXTURES_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  return std::string(LMTRAIN_SOURCE_DIR) + "/../shared/fixtures/hf-tiny";
}

}  // namespace lmtrain::testing
