#include "text/tokenizers/internal/file_util.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "text/tokenizers/internal/absl_view.h"

namespace lmtrain::tokenizers_internal {
namespace {

absl::Status ErrnoStatus(const std::string& path, std::string_view action,
                         int error) {
  const std::string message = absl::StrCat(path, ": cannot ", AbslView(action),
                                           ": ", std::strerror(error));
  if (error == ENOENT) return absl::NotFoundError(message);
  if (error == EACCES || error == EPERM)
    return absl::PermissionDeniedError(message);
  return absl::InternalError(message);
}

}  // namespace

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) {
    return absl::NotFoundError(absl::StrCat(path, ": no such file"));
  }
  if (!ec && status.type() != std::filesystem::file_type::regular) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a regular file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoStatus(path, "open", errno);
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return ErrnoStatus(path, "read", errno);
  return std::move(contents).str();
}

absl::Status WriteFile(const std::string& path, std::string_view contents) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return ErrnoStatus(tmp, "create", errno);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) return ErrnoStatus(tmp, "write", errno);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(tmp.c_str());
    return ErrnoStatus(path, "replace", error);
  }
  return absl::OkStatus();
}

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

bool IsRegularFile(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string JoinPath(std::string_view dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  if (dir.back() == '/') return absl::StrCat(AbslView(dir), AbslView(name));
  return absl::StrCat(AbslView(dir), "/", AbslView(name));
}

}  // namespace lmtrain::tokenizers_internal
