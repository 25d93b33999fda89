// Atomic, durable publication of a small file: write "<path>.tmp-<pid>", fsync, rename over
// `path`, fsync the folder. A crash leaves the old file or the new one, never a torn one.
// (worker/trainer/atomic_file.h does the same for the trainer; this library must not depend on
// the trainer's, which is built only with LibTorch.) Thread-safe as far as the file system is:
// two writers of one path race.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace lmtrain::internal {

// The parent folder must exist. Internal naming the path and errno text on failure (the temp
// file is removed).
absl::Status WriteFileAtomically(const std::string& path, const std::string& contents);

}  // namespace lmtrain::internal
