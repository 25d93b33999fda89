// Finds a job's checkpoint folder on the server and lists its files, for `lmctl download`.
// A checkpoint is a published `checkpoint-N/` folder directly under the job's output dir (see
// docs/tasks.md: temp folders `.tmp-*` are never checkpoints). Every listed file resolves,
// symlinks included, to a path inside the checkpoint folder; anything else is refused.
// Thread-safe: pure functions over the file system.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace lmtrain {

struct CheckpointFiles {
  int64_t step = 0;
  std::string dir;                 // Absolute checkpoint-N folder.
  std::vector<std::string> files;  // Relative '/'-separated paths, sorted; manifest.json too.
};

// The checkpoint of `step` (or the highest step when unset) under `output_dir`. NotFound
// naming the folder when there is none (or not that step); PermissionDenied when a file
// resolves outside the checkpoint folder.
absl::StatusOr<CheckpointFiles> FindCheckpointFiles(const std::string& output_dir,
                                                    std::optional<int64_t> step);

}  // namespace lmtrain
