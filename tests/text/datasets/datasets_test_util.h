// Helpers shared by the datasets tests: paths into tests/testdata and temporary files.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/test_paths.h"

namespace lmtrain {

// <source>/tests/testdata/<relative>.
inline std::string TestdataPath(const std::string& relative) {
  return std::string(LMTRAIN_SOURCE_DIR) + "/tests/testdata/" + relative;
}

// Writes `text` byte for byte to a fresh file `name` under the test's temp folder.
inline std::string WriteTemp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "datasets_test" / name;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path.string();
}

}  // namespace lmtrain
