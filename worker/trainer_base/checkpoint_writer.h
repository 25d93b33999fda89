// Publishes training checkpoints atomically, with a manifest, and keeps the newest few.
// Torch-free: what goes into a checkpoint is the caller's `fill` function.
//
// Save(step) lifecycle, all inside output_dir:
//
//   .tmp-checkpoint-STEP-PID/ ─fill(dir)─► files ─manifest.json─► FsyncTree ─► rename
//                                  (sizes + SHA-256s, checkpoint_manifest.h)      │
//                                                                                 ▼
//     retention: delete checkpoint-N beyond the newest ◄── ok ── verify ◄── checkpoint-STEP/
//     save_total_limit, never the protected (best) one             │
//     nor the new one (rename away, then remove)                   └─► DataLoss: stop,
//                                                                      nothing deleted
//
// A crash at any point leaves no partial "checkpoint-N": only .tmp-* folders, which are
// never listed as checkpoints. Re-saving an existing step replaces it (old one renamed
// away first, removed only after the new one is in place and verified). Nothing is deleted
// before the new checkpoint has been re-read and matched against its manifest.
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
#include "worker/trainer_base/checkpoint_manifest.h"

namespace lmtrain {

// Writes a checkpoint's files into `dir` (exists, empty).
using FillFolderFn = std::function<absl::Status(const std::string& dir)>;

// Checks a published checkpoint folder (VerifyCheckpoint's contract).
using VerifyFolderFn = std::function<absl::StatusOr<CheckpointIntegrity>(const std::string& dir)>;

class CheckpointWriter {
 public:
  struct Options {
    std::string output_dir;  // Must exist. Made absolute by the constructor.
    // > 0: keep the newest this many checkpoint-N (by N), plus the protected one and the one
    // just saved; 0: keep all.
    int save_total_limit = 0;
    // Re-reads a checkpoint after its rename. Empty (the default): VerifyCheckpoint. The seam
    // lets tests see what happens when the file system returns other bytes than written.
    VerifyFolderFn verify;
  };

  explicit CheckpointWriter(Options options);
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  // Writes output_dir/checkpoint-STEP with its manifest.json, publishes it, verifies it and
  // only then applies retention; returns its absolute path. Errors: whatever `fill` returns,
  // or Internal for file-system failures (the temp folder is removed); ResourceExhausted
  // "no space left on device writing FILE of PATH ..." when the disk fills up while writing
  // (nothing published, earlier checkpoints untouched and still listed); DataLoss when the
  // published folder does not match its manifest (it stays for inspection and no other
  // checkpoint is deleted; resume skips it). A retention failure after publication is
  // reported as Internal, with the new checkpoint in place.
  absl::StatusOr<std::string> Save(int64_t step, const FillFolderFn& fill);

  // The absolute path Save(step) publishes.
  std::string PathFor(int64_t step) const;

  // A checkpoint folder (absolute, as PathFor gives) that retention never deletes: the best
  // one with load_best_model_at_end. Empty: none. With it, one more folder than
  // save_total_limit may remain: the best and the newest save_total_limit (HF counts the best
  // among the limit instead).
  void set_protected_path(std::string path) { protected_path_ = std::move(path); }

  // Cleans up after a crash of an earlier writer, before this one saves: removes its .tmp-*
  // and .deleting-* folders, and a checkpoint-N.old-PID left while checkpoint-N was being
  // replaced is removed when checkpoint-N exists, else renamed back to checkpoint-N (the crash
  // came between the two renames). Only for a folder no other process writes to (rank 0 of a
  // job). Returns what it did, one line per folder; Internal naming the folder on a failure.
  absl::StatusOr<std::vector<std::string>> RecoverFromCrash();

  // The checkpoint-N folders in `output_dir`, sorted by N ascending, as (N, absolute path).
  static std::vector<std::pair<int64_t, std::string>> List(const std::string& output_dir);

 private:
  absl::StatusOr<std::string> Publish(const std::string& temp, const std::string& final_path);
  absl::Status VerifyPublished(const std::string& path) const;
  absl::Status ApplyRetention(const std::string& just_saved);

  Options options_;
  std::string protected_path_;
};

// True for the ResourceExhausted that Save() and PublishFilesInto() return when the disk
// fills up (it carries a status payload, so it is recognized wherever the status is passed
// on unchanged); false for every other status, out-of-memory ResourceExhausted included.
bool IsOutOfDiskSpace(const absl::Status& status);

// Writes the files `fill` produces directly into `dir` (which must exist), each one
// replacing any old file of the same name by rename: they are written and fsync'ed in a
// temp folder inside `dir` first. Folders that `fill` creates are not supported. A full disk
// while writing gives ResourceExhausted as in Save() (the old files stay).
absl::Status PublishFilesInto(const std::string& dir, const FillFolderFn& fill);

}  // namespace lmtrain
