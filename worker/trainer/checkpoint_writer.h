// Publishes training checkpoints atomically and keeps the newest few. Torch-free: what goes
// into a checkpoint is the caller's `fill` function.
//
// Save(step) lifecycle, all inside output_dir:
//
//   .tmp-checkpoint-STEP-PID/  ──fill(dir)──► files ──FsyncTree──► rename ──► checkpoint-STEP/
//                                                                      │
//                                     (only now) retention: delete oldest checkpoint-N
//                                     beyond save_total_limit (rename away, then remove),
//                                     never the newest nor the protected (best) one
//
// A crash at any point leaves no partial "checkpoint-N": only .tmp-* folders, which are
// never listed as checkpoints. Re-saving an existing step replaces it (old one renamed
// away first, removed after the new one is in place).
//
// Not thread-safe: one writer per output folder (the training loop's thread).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lmtrain {

// Writes a checkpoint's files into `dir` (exists, empty).
using FillFolderFn = std::function<absl::Status(const std::string& dir)>;

class CheckpointWriter {
 public:
  struct Options {
    std::string output_dir;    // Must exist. Made absolute by the constructor.
    int save_total_limit = 0;  // > 0: keep at most this many checkpoint-N; 0: keep all.
  };

  explicit CheckpointWriter(Options options);
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  // Writes and publishes output_dir/checkpoint-STEP; returns its absolute path.
  // Errors: whatever `fill` returns, or Internal for file-system failures (the temp folder
  // is removed). A retention failure after publication is reported as Internal too, with
  // the new checkpoint in place.
  absl::StatusOr<std::string> Save(int64_t step, const FillFolderFn& fill);

  // The absolute path Save(step) publishes.
  std::string PathFor(int64_t step) const;

  // A checkpoint folder (absolute, as PathFor gives) that retention never deletes: the best
  // one with load_best_model_at_end. Empty: none. With it, one more folder than
  // save_total_limit may remain (as HF keeps the best and the latest).
  void set_protected_path(std::string path) { protected_path_ = std::move(path); }

  // The checkpoint-N folders in `output_dir`, sorted by N ascending, as (N, absolute path).
  static std::vector<std::pair<int64_t, std::string>> List(const std::string& output_dir);

 private:
  absl::Status Publish(const std::string& temp, const std::string& final_path);
  absl::Status ApplyRetention();

  Options options_;
  std::string protected_path_;
};

// Writes the files `fill` produces directly into `dir` (which must exist), each one
// replacing any old file of the same name by rename: they are written and fsync'ed in a
// temp folder inside `dir` first. Folders that `fill` creates are not supported.
absl::Status PublishFilesInto(const std::string& dir, const FillFolderFn& fill);

}  // namespace lmtrain
