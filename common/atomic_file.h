// Durable, atomic file publication on POSIX file systems. Torch-free.
//
// "Durable" means fsync'ed: a file's data before the rename that publishes it, and the
// folder after it, so a crash leaves either the old state or the new one, never a torn file.
// Thread-safe as far as the file system is: two writers of the same path race.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace lmtrain {

// fsync of a file or folder. Internal with the path and errno text on failure.
absl::Status FsyncPath(const std::string& path);

// fsync of every regular file below `dir` (recursively), then of each folder, `dir` last.
absl::Status FsyncTree(const std::string& dir);

// Writes `contents` to "<path>.tmp-<pid>", fsyncs it, renames it to `path` and fsyncs the
// parent folder. The parent must exist. Internal naming the path on failure (the temp file
// is removed).
absl::Status WriteFileAtomically(const std::string& path, const std::string& contents);

// rename(2) of `from` to `to` (same file system), then fsync of `to`'s parent folder.
absl::Status RenameDurably(const std::string& from, const std::string& to);

}  // namespace lmtrain
