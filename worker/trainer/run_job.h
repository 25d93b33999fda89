// One fine-tuning job from a parsed JobSpec to files in the output folder: the body of
// lm-train, as HF's run_clm.py / run_mlm.py / run_qa.py / run_glue.py.
//
//   tokenizer (load, or train → DIR/tokenizer/spiece.model) ─► task (task_factory.h: model
//   + data) ─► Trainer: [resume] [eval] train [eval] [predict]
//   ─► DIR/{config.json, model.safetensors, tokenizer files, trainer_state.json,
//          train_results.json, eval_results.json, predict_results.json, all_results.json,
//          checkpoint-N/..., runs/<Mon DD_HH-MM-SS>_<host>/events.out.tfevents.* unless
//          training.report_to is none: tensorboard_callback.h}
//
// The header is torch-free so that main() needs no LibTorch. Concurrency: runs on the
// calling thread (the training loop's); other threads may only set *stop_requested.
#pragma once

#include <atomic>
#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "common/job_spec.h"
#include "worker/trainer_base/distributed_env.h"
#include "worker/trainer_base/event_sink.h"

namespace lmtrain {

struct JobOptions {
  std::string output_dir;  // Created if missing.
  int threads = 0;         // torch intra-op threads; 0: std::thread::hardware_concurrency().
  // Resume from the newest complete, verified checkpoint in output_dir (lm-train --resume),
  // as training.resume_from_checkpoint: latest. NotFound when there is none. Corrupt
  // checkpoints are skipped with a warning (resume_point.h).
  bool resume = false;
  // Resume when output_dir holds a usable checkpoint; start fresh when it holds none.
  bool auto_resume = false;
  EventSink* events = nullptr;  // Borrowed, not null.
  std::ostream* out = nullptr;  // HF-style log lines. Borrowed, not null.
  std::ostream* err = nullptr;  // Warnings. Borrowed, not null.
  // Set by a signal handler to stop at the next update boundary. May be null.
  const std::atomic<bool>* stop_requested = nullptr;
  // This process's rank in a data-parallel job (default: a single process). With
  // world_size > 1 all ranks share output_dir: rank 0 alone trains the tokenizer, writes
  // checkpoints, the final model and results, and sends events; the others log lines only.
  DistributedEnv distributed;
};

struct JobResult {
  // A stop request (on any rank) ended the job early: a checkpoint was saved at that step
  // unless save_strategy is "no"; nothing final was written.
  bool stopped = false;
  int64_t step = 0;  // Optimizer updates done.
};

// Runs the job. Errors: InvalidArgument (bad model/task combination, tokenizer ids beyond
// the model's vocabulary), FailedPrecondition (not enough data, a checkpoint from another
// run, an output folder holding checkpoints when the job neither resumes nor sets
// training.overwrite_output_dir: resume_point.h CheckOutputDir), NotFound / DataLoss (files, naming
// them; an explicit resume_from_checkpoint that fails verification), Internal (LibTorch, non-finite
// loss, file system), each with context; Unavailable when the data-parallel group fails (a lost or
// hung peer, rendezvous timeout): worth retrying.
absl::StatusOr<JobResult> RunJob(const JobSpec& spec, const JobOptions& options);

}  // namespace lmtrain
