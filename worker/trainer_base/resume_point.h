// Which checkpoint a job resumes from: lm-train --resume / --auto-resume and
// training.resume_from_checkpoint. Torch-free; reads only the file system.
//
// Automatic choice (--resume, --auto-resume, resume_from_checkpoint: latest | true) looks at
// the checkpoint-N folders in the output folder, newest first:
//   - verified (manifest.json matches, checkpoint_manifest.h): taken, the first one found;
//   - corrupt (manifest.json does not match): skipped, with a warning naming the file;
//   - unverified (no manifest.json: an older lm-train wrote it): used only when no verified
//     one exists, and only if it has lmtrain_state.json (complete), with a warning.
// An explicit path (resume_from_checkpoint: PATH) is used as given: a corrupt one is an
// error naming the path, the file and what is wrong; an unverified one is accepted with a
// warning (it may be an HF folder or an old checkpoint; the trainer checks its files).
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lmtrain {

struct ResumeRequest {
  // Where this run's checkpoint-N folders are.
  std::string output_dir;
  // training.resume_from_checkpoint: "" or false (none), latest or true, or a PATH.
  std::string resume_from_checkpoint;
  // lm-train --resume: resume the newest; none is an error.
  bool resume = false;
  // lm-train --auto-resume: a retry; its own newest checkpoint first, if it has one.
  bool auto_resume = false;
};

// The newest checkpoint-N in `output_dir` to resume from by the rule above, or nullopt when
// there is none. Warnings ("warning: ...", one line each) go to `warnings`.
std::optional<std::string> NewestResumableCheckpoint(const std::string& output_dir,
                                                     std::ostream& warnings);

// The checkpoint folder to resume from, or "" for a fresh start:
//   auto_resume (without resume): the newest resumable in output_dir; when there is none,
//     resume_from_checkpoint decides as below ("" or latest: fresh start).
//   resume, or resume_from_checkpoint latest / true: the newest resumable; NotFound when
//     there is none.
//   resume_from_checkpoint PATH: PATH, verified; NotFound when it is not a folder, DataLoss
//     when it does not match its manifest.
absl::StatusOr<std::string> ChooseResumePoint(const ResumeRequest& request, std::ostream& warnings);

// HF run_*.py's guard against training over an earlier run, made before ChooseResumePoint: when
// request.output_dir holds checkpoint-N folders and the request does not resume (resume,
// auto_resume and resume_from_checkpoint all unset or false), FailedPrecondition "Output directory
// (DIR) already exists and is not empty ... Use --overwrite_output_dir to overcome." — unless
// `overwrite_output_dir`, which deletes those folders first (a line on `log` says so; Internal
// when one cannot be deleted). A request that resumes keeps its checkpoints, overwrite or not,
// so that a retried attempt (--auto-resume) continues where the last one stopped.
absl::Status CheckOutputDir(const ResumeRequest& request, bool overwrite_output_dir,
                            std::ostream& log);

}  // namespace lmtrain
