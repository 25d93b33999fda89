// The data-roots rule (lm-server --data-roots DIR,...): when roots are configured, a job may
// only read local paths (model, tokenizer, data files and folders, resume_from_checkpoint)
// that lie under one of them, and may only write under the artifacts dir (its output_dir,
// which the server assigns). Artifact references (artifact:sha256:...) are always allowed:
// they name the server's own store.
//
// Paths are compared after symlinks are resolved (std::filesystem::weakly_canonical), so
// neither `..` components nor a symlink inside a root that points outside it escape. The roots
// themselves are canonicalised the same way.
// Thread-safe: pure functions (they read the file system to resolve symlinks).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/job_spec.h"

namespace lmtrain {

// True when `path` (absolute) resolves to `root` itself or a path below it (both resolved).
bool IsUnderRoot(const std::string& path, const std::string& root);

// OK when `roots` is empty, or every local path of `spec` and `output_dir` obey the rule.
// InvalidArgument otherwise, one line per offending field:
//   data.train_file: /etc/passwd (resolves to /etc/passwd) is outside the data roots
//   (/data, /shared)
// `output_dir` must lie under `artifacts_dir` (key "output_dir").
absl::Status CheckJobPaths(const JobSpec& spec, const std::string& output_dir,
                           const std::vector<std::string>& roots, const std::string& artifacts_dir);

}  // namespace lmtrain
