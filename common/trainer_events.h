// The wire format between lm-train and the lm-worker agent that runs it.
//
// lm-train writes one JSON object per line to the file descriptor given by
// `--events-fd N` (the worker passes a pipe). Kinds:
//   {"type":"metrics", "metrics":{"step":10,"loss":3.1,...}}
//   {"type":"checkpoint", "step":100, "path":"/abs/dir/checkpoint-100"}
//   {"type":"error", "message":"..."}           (the trainer's final error, before exit 1)
// Log text is not sent here: the worker reads the child's stdout/stderr itself.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "common/training_metrics.h"

namespace lmtrain {

struct TrainerEvent {
  enum class Type { kMetrics, kCheckpoint, kError };
  Type type = Type::kMetrics;
  TrainingMetrics metrics;  // kMetrics
  int64_t step = 0;         // kCheckpoint
  std::string path;         // kCheckpoint
  std::string message;      // kError
};

// One line of JSON, without the trailing newline. Invalid UTF-8 in path or message is replaced
// by U+FFFD; never throws.
std::string EncodeTrainerEvent(const TrainerEvent& event);
// Parses one line; InvalidArgument for anything that is not a well-formed event.
absl::StatusOr<TrainerEvent> DecodeTrainerEvent(std::string_view line);

}  // namespace lmtrain
