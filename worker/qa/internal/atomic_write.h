// Atomic file replacement for the QA output files. Thread-safe as far as the file system is:
// two writers of the same path race, and the last rename wins.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace lmtrain::qa_internal {

// Writes `contents` to "<path>.tmp-<pid>", fsyncs it and renames it over `path`, so readers see
// the old file or the new one, never a part. The parent folder must exist. Internal naming the
// path and the system error on failure (the temp file is removed).
absl::Status WriteFileAtomically(const std::string& path, const std::string& contents);

}  // namespace lmtrain::qa_internal
