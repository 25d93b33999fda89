// One CLM fine-tuning job from a parsed JobSpec to files in the output folder: the body
// of lm-train, as HF run_clm.py.
//
//   tokenizer (load, or train → DIR/tokenizer/spiece.model) ─► model (create or load,
//   seeded) ─► examples (clm_dataset.h) ─► ClmTrainer: [eval] train [eval]
//   ─► DIR/{config.json, model.safetensors, tokenizer files, trainer_state.json,
//          train_results.json, eval_results.json, all_results.json}
//
// The header is torch-free so that main() needs no LibTorch; the implementation is the
// trainer's wiring. Concurrency: runs on the calling thread (the training loop's); other
// threads may only set *stop_requested.
#pragma once

#include <atomic>
#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "common/job_spec.h"
#include "worker/trainer/event_sink.h"

namespace lmtrain {

struct ClmJobOptions {
  std::string output_dir;       // Created if missing.
  int threads = 0;              // torch intra-op threads; 0: std::thread::hardware_concurrency().
  EventSink* events = nullptr;  // Borrowed, not null.
  std::ostream* out = nullptr;  // HF-style log lines. Borrowed, not null.
  std::ostream* err = nullptr;  // Warnings. Borrowed, not null.
  // Set by a signal handler to stop at the next update boundary. May be null.
  const std::atomic<bool>* stop_requested = nullptr;
};

struct ClmJobResult {
  bool stopped = false;  // A stop request ended the job early; nothing final was written.
  int64_t step = 0;      // Optimizer updates done.
};

// Runs the job. Errors: InvalidArgument (task is not clm, block_size too large, tokenizer
// ids beyond the model's vocabulary), FailedPrecondition (not enough text), NotFound /
// DataLoss (files), Internal (LibTorch, non-finite loss, file system), each with context.
absl::StatusOr<ClmJobResult> RunClmJob(const JobSpec& spec, const ClmJobOptions& options);

}  // namespace lmtrain
