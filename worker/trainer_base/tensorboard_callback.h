// TensorBoardCallback: HF's transformers.integrations.TensorBoardCallback for lm-train —
// every log (training, evaluation, the end-of-training summary) becomes TensorBoard scalars
// at the global step. Torch-free.
//
// Tags follow HF's rewrite_logs: "eval_x" → "eval/x", "test_x" → "test/x", anything else →
// "train/x" (train/loss, train/learning_rate, train/grad_norm, train/epoch,
// train/tokens_per_second, train/train_runtime, ...). One exception: "perplexity", which
// lm-train logs with each clm/mlm evaluation, is "eval/perplexity". Non-numeric values are
// skipped. The event file is created on the first log (a job that logs nothing leaves no
// folder behind), in `log_dir`; see common/tensorboard/summary_writer.h.
//
// Errors never stop training: the first failure to create or write the file is reported
// once on `err` and the callback writes nothing more (the same values are still in
// trainer_state.json).
// Not thread-safe: the training loop's thread.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/tensorboard/summary_writer.h"
#include "worker/trainer_base/log_callback.h"

namespace lmtrain {

struct TensorBoardCallbackOptions {
  std::string log_dir;           // Required; created on the first log.
  std::ostream* err = nullptr;   // Warnings. Borrowed, not null.
  std::string hostname;          // For the file name; "": this machine's.
  const Clock* clock = nullptr;  // null: SystemClock.
};

class TensorBoardCallback final : public LogCallback {
 public:
  explicit TensorBoardCallback(TensorBoardCallbackOptions options) : options_(std::move(options)) {}
  // Closes the event file (a close error is a warning).
  ~TensorBoardCallback() override;
  TensorBoardCallback(const TensorBoardCallback&) = delete;
  TensorBoardCallback& operator=(const TensorBoardCallback&) = delete;

  void OnLog(const nlohmann::json& logs, int64_t global_step) override;

  // The event file's path; "" before the first log or after a failure to create it.
  std::string event_file() const { return writer_ ? writer_->path() : ""; }

 private:
  void Fail(const absl::Status& status);

  const TensorBoardCallbackOptions options_;
  std::unique_ptr<tensorboard::SummaryWriter> writer_;
  bool failed_ = false;
};

// The TensorBoard tag of a logged key (see the file comment).
std::string TensorBoardTag(std::string_view key);

// HF's default logging_dir: <output_dir>/runs/<%b%d_%H-%M-%S>_<hostname>, the time (Unix
// milliseconds `now_ms`) in local time, e.g. out/runs/Nov24_03-50-12_node7.
std::string DefaultLoggingDir(const std::string& output_dir, int64_t now_ms,
                              const std::string& hostname);

// The TensorBoard folder of a job: `logging_dir` (training.logging_dir, relative to the
// output folder) under `output_dir`, or DefaultLoggingDir when it is empty.
std::string ResolveLoggingDir(const std::string& output_dir, const std::string& logging_dir,
                              int64_t now_ms, const std::string& hostname);

}  // namespace lmtrain
