// SummaryWriter: scalars into one TensorBoard event file, as torch.utils.tensorboard's
// SummaryWriter writes them. Torch-free.
//
//   <log_dir>/events.out.tfevents.<unix seconds>.<hostname>
//   record 1: Event{wall_time, file_version: "brain.Event:2"}
//   record n: Event{wall_time, step, summary{value{tag, simple_value}}}, one per AddScalar
//
// Every record reaches the file (one write(2)) before the call that made it returns, so
// TensorBoard sees a running job's scalars as they come ("flush after each write").
//
// Lifecycle:
//   Create() ─► AddScalar()* ─► Close() (or destruction, which closes without reporting)
// Not thread-safe: one writing thread (the training loop's).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/clock.h"
#include "common/tensorboard/tf_record.h"

namespace lmtrain::tensorboard {

inline constexpr std::string_view kFileVersion = "brain.Event:2";

struct SummaryWriterOptions {
  std::string log_dir;           // Created (with parents) if missing. Required.
  std::string hostname;          // In the file name. "": this machine's (Hostname()).
  const Clock* clock = nullptr;  // Wall times and the file name's seconds. null: SystemClock.
};

class SummaryWriter {
 public:
  // Creates the folder and the event file and writes the file_version event. When a file of
  // that name exists already (two writers in the same second), ".1", ".2", ... is appended.
  // InvalidArgument for an empty log_dir; Internal naming the path for file system errors.
  static absl::StatusOr<std::unique_ptr<SummaryWriter>> Create(const SummaryWriterOptions& options);
  SummaryWriter(const SummaryWriter&) = delete;
  SummaryWriter& operator=(const SummaryWriter&) = delete;

  // Appends the scalar `value` (stored as float32, as TensorBoard's simple_value) under `tag`
  // at `step`. Internal naming the file on a write error.
  absl::Status AddScalar(std::string_view tag, double value, int64_t step);
  // Closes the file; see TfRecordWriter::Close.
  absl::Status Close() { return file_->Close(); }

  // The event file's path.
  const std::string& path() const { return file_->path(); }

 private:
  SummaryWriter(std::unique_ptr<TfRecordWriter> file, const Clock* clock)
      : file_(std::move(file)), clock_(clock) {}

  double WallTime() const { return static_cast<double>(clock_->NowMs()) / 1000.0; }

  const std::unique_ptr<TfRecordWriter> file_;
  const Clock* const clock_;
};

// gethostname(2), or "localhost" when it fails.
std::string Hostname();

}  // namespace lmtrain::tensorboard
