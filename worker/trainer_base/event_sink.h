// Where lm-train's trainer events go (see common/trainer_events.h). Torch-free.
//
// EventSink is the seam: the trainer emits, main() decides where to. FdEventSink writes
// one JSON line per event to a file descriptor it does not own (the worker's pipe), with
// write(2) directly, so every line is flushed when Emit returns.
// Not thread-safe: one emitting thread (the training loop).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "common/trainer_events.h"

namespace lmtrain {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // Delivers one event. Errors are the sink's (e.g. the reader went away); the trainer
  // reports them as warnings and goes on.
  virtual absl::Status Emit(const TrainerEvent& event) = 0;
};

// Drops every event.
class NullEventSink final : public EventSink {
 public:
  absl::Status Emit(const TrainerEvent&) override { return absl::OkStatus(); }
};

class FdEventSink final : public EventSink {
 public:
  // `fd` must stay open while the sink is used; it is not closed here. Write SIGPIPE should
  // be ignored by the process (main() does) so a closed pipe is an EPIPE error here.
  explicit FdEventSink(int fd) : fd_(fd) {}
  FdEventSink(const FdEventSink&) = delete;
  FdEventSink& operator=(const FdEventSink&) = delete;

  // Writes EncodeTrainerEvent(event) + "\n", retrying partial writes and EINTR.
  // Internal with the fd and errno text on failure.
  absl::Status Emit(const TrainerEvent& event) override;

 private:
  const int fd_;
};

}  // namespace lmtrain
