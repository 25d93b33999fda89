// A file with the given bytes in the test's temp folder, for tests that read files.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace lmtrain {

// Writes `text` to TempDir()/`name` (replacing it) and returns the path.
inline std::string WriteTemp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::path(::testing::TempDir()) / name;
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

}  // namespace lmtrain
