// manifest.json: what a published checkpoint-N folder holds, so that a reader can tell a
// complete, intact checkpoint from a truncated or bit-rotten one. Torch-free.
//
//   {"format": 1, "step": 12,
//    "files": [{"path": "config.json", "size": 512, "sha256": "9f86d0..."}, ...]}
//
// Every regular file below the folder is listed (paths relative to it, '/'-separated, sorted),
// except manifest.json itself. CheckpointWriter writes it into the temp folder after `fill`
// and before fsync + rename, and verifies the folder again after the rename.
//
// Verification checks exactly the listed files: each must exist with the listed size and
// SHA-256. Files not listed (added later by hand) are ignored. A folder without
// manifest.json (written by an older lm-train, or an HF model folder) is "unverified", not
// corrupt; what to do with it is the caller's rule (resume_point.h).
//
// Thread-safe (no shared state); two callers on the same folder race as the file system does.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lmtrain {

inline constexpr char kCheckpointManifestFile[] = "manifest.json";

enum class CheckpointIntegrity {
  kVerified,    // manifest.json present and every listed file matches it.
  kUnverified,  // No manifest.json: nothing to check against.
};

// Hashes every regular file below `dir` and writes `dir`/manifest.json (atomically, fsync'ed)
// for checkpoint `step`. Errors: NotFound / DataLoss naming a file that cannot be read,
// Internal when the manifest cannot be written.
absl::Status WriteCheckpointManifest(const std::string& dir, int64_t step);

// Checks `dir` against its manifest.json. DataLoss, naming `dir` and the file, when:
// manifest.json is unreadable (not JSON, wrong format, a path outside the folder), its step
// differs from the folder's checkpoint-N name, a listed file is missing, its size differs, or
// its SHA-256 differs. NotFound when `dir` is not a folder.
absl::StatusOr<CheckpointIntegrity> VerifyCheckpoint(const std::string& dir);

}  // namespace lmtrain
