#include "fuzz/fuzz_files.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace lmtrain {
namespace {

void RemoveFuzzDir() {
  std::error_code ignored;
  std::filesystem::remove_all(FuzzDir(), ignored);
}

// A file rewritten for every input costs a disk file system's journal more than the parser
// takes; /dev/shm (memory) does not.
std::filesystem::path FuzzDirParent(std::error_code& error) {
  if (std::getenv("TMPDIR") == nullptr && access("/dev/shm", W_OK | X_OK) == 0) return "/dev/shm";
  return std::filesystem::temp_directory_path(error);
}

std::string MakeFuzzDir() {
  std::error_code error;
  std::string pattern = (FuzzDirParent(error) / "lmtrain-fuzz-XXXXXX");
  if (error || mkdtemp(pattern.data()) == nullptr) {
    std::perror("lmtrain fuzz: cannot create a temporary folder");
    std::abort();
  }
  return pattern;
}

}  // namespace

const std::string& FuzzDir() {
  static const std::string* dir = [] {
    auto* made = new std::string(MakeFuzzDir());
    std::atexit(RemoveFuzzDir);
    return made;
  }();
  return *dir;
}

std::string FuzzFile(const std::string& name, std::string_view data) {
  const std::filesystem::path path = std::filesystem::path(FuzzDir()) / name;
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  if (error || !out) {
    std::fprintf(stderr, "lmtrain fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
  return path.string();
}

std::vector<std::string_view> FuzzParts(std::string_view data, size_t count) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < count) {
    const size_t at = data.find(kFuzzPartSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(data.substr(0, at));
    data.remove_prefix(at + kFuzzPartSeparator.size());
  }
  parts.push_back(data);
  parts.resize(count);
  return parts;
}

}  // namespace lmtrain
