#include "proto_convert.h"

namespace lmtrain {

// JobState's enumerators carry the proto's numbers (pinned by tests/server).
v1::JobState ToProto(JobState state) { return static_cast<v1::JobState>(state); }

JobState FromProto(v1::JobState state) {
  const int n = static_cast<int>(state);
  if (n < 1 || n > static_cast<int>(JobState::kRetrying)) return JobState::kQueued;
  return static_cast<JobState>(n);
}

// One table for both directions: (core member, proto has_/getter/setter).
#define LMTRAIN_METRIC_FIELDS(X)                                                         \
  X(step)                                                                                \
  X(max_steps)                                                                           \
  X(loss)                                                                                \
  X(learning_rate) X(eval_loss) X(perplexity) X(tokens_per_second) X(epoch) X(grad_norm) \
      X(num_input_tokens_seen)

void ToProto(const TrainingMetrics& m, v1::Metrics* out) {
  out->Clear();
#define X(f) \
  if (m.f.has_value()) out->set_##f(*m.f);
  LMTRAIN_METRIC_FIELDS(X)
#undef X
  out->mutable_eval_metrics()->insert(m.eval_metrics.begin(), m.eval_metrics.end());
}

TrainingMetrics FromProto(const v1::Metrics& p) {
  TrainingMetrics m;
#define X(f) \
  if (p.has_##f()) m.f = p.f();
  LMTRAIN_METRIC_FIELDS(X)
#undef X
  m.eval_metrics.insert(p.eval_metrics().begin(), p.eval_metrics().end());
  return m;
}

void ToProtoTime(int64_t ms, google::protobuf::Timestamp* out) {
  out->Clear();
  if (ms == 0) return;
  out->set_seconds(ms / 1000);
  out->set_nanos(static_cast<int32_t>((ms % 1000) * 1000000));
}

int64_t FromProtoTime(const google::protobuf::Timestamp& ts) {
  return ts.seconds() * 1000 + ts.nanos() / 1000000;
}

}  // namespace lmtrain
