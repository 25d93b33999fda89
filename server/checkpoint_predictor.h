// CheckpointPredictor: inference on a finished job's published checkpoint, for
// JobService.Predict (`lmctl predict`). It runs
//   lm-train predict --model OUTPUT_DIR/checkpoint-N (--fill-mask TEXT | --generate PROMPT) ...
// (worker/trainer/predict.h) as a child process and returns the JSON document it prints.
//
// Why a child of lm-server, not a worker: lm-server links no LibTorch, and the published
// checkpoints already live in the server's artifacts folder (workers upload them there; the
// same folder serves `lmctl download`), so the server runs the lm-train binary beside it on
// that folder: no scheduling, no copy of the checkpoint, one short CPU forward pass. The
// child is started through the ProcessLauncher seam in its own process group (killed if the
// server dies); its stdout and stderr are read up to kMaxPredictOutput bytes each, and a child
// still running after `timeout` gets SIGKILL and the call fails.
//
// Errors: FailedPrecondition when the job has not finished (QUEUED, SCHEDULED, RUNNING, ...)
// or has no output folder under the artifacts folder; NotFound when it has no checkpoint (or
// not that step); InvalidArgument for a request without --fill-mask / --generate text, and for
// what lm-train predict refuses (its message: no mask token, not a masked LM, ...);
// Unavailable when lm-train cannot be started; DeadlineExceeded after `timeout`;
// ResourceExhausted when `max_running` predictions already run (each child loads LibTorch
// and a model, so callers cannot start them without bound).
// Thread-safe: calls run at once, each with its own child; only the count of running ones is
// shared (atomic).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/process_launcher.h"
#include "storage/job_store.h"

namespace lmtrain {

inline constexpr size_t kMaxPredictOutput = 4 << 20;  // Bytes of stdout (and of stderr) kept.

// One prediction; the fields are lm-train predict's flags.
struct PredictInput {
  std::optional<int64_t> step;  // Unset: the latest checkpoint.
  std::string fill_mask;        // Exactly one of fill_mask and generate is set.
  std::string generate;
  std::optional<int> top_k;           // fill-mask: candidates (5); generate: 0 greedy (0).
  std::optional<int> max_new_tokens;  // generate (30)
  std::optional<double> temperature;  // generate (1.0)
  std::optional<int64_t> seed;        // generate (42)
};

struct PredictOutput {
  int64_t step = 0;  // The checkpoint used.
  std::string json;  // lm-train predict's stdout: one JSON document.
};

class CheckpointPredictor {
 public:
  struct Options {
    std::string trainer_path;   // The lm-train binary.
    std::string artifacts_dir;  // Checkpoints outside it are never used.
    absl::Duration timeout = absl::Seconds(120);
    int max_running = 4;  // Predictions running at once; more are refused.
  };

  // `launcher` is not owned and must outlive this.
  CheckpointPredictor(Options options, ProcessLauncher* launcher)
      : options_(std::move(options)), launcher_(launcher) {}

  // Runs the prediction on `job`'s checkpoint (see the errors above).
  absl::StatusOr<PredictOutput> Predict(const JobRecord& job, const PredictInput& input) const;

 private:
  absl::StatusOr<PredictOutput> Run(const JobRecord& job, const PredictInput& input) const;

  const Options options_;
  ProcessLauncher* const launcher_;
  mutable std::atomic<int> running_{0};
};

}  // namespace lmtrain
