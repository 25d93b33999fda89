// Whole-file reads and writes with Status errors that name the path.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lmtrain::tokenizers_internal {

// Contents of the regular file `path`. NotFound when it does not exist,
// InvalidArgument when it is not a regular file, PermissionDenied / Internal
// (with the system's reason) when unreadable.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// Replaces `path` with `contents` (written to "<path>.tmp", then renamed over
// it, so readers never see half a file). The directory must exist. Errors name
// the path and the reason.
absl::Status WriteFile(const std::string& path, std::string_view contents);

bool IsDirectory(const std::string& path);
bool IsRegularFile(const std::string& path);

// The part of `path` before / after its last '/' ("." / `path` when it has
// none).
std::string DirName(const std::string& path);
std::string BaseName(const std::string& path);

// "dir/name", without doubling a trailing '/'.
std::string JoinPath(std::string_view dir, std::string_view name);

}  // namespace lmtrain::tokenizers_internal
