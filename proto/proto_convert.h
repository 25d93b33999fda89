// Conversions between lmtrain.v1 messages and the core structs of common/ and storage/,
// shared by lm-server, lm-worker and lmctl so each mapping is written once.
#pragma once

#include <cstdint>

#include "common/job_state.h"
#include "common/training_metrics.h"
#include "google/protobuf/timestamp.pb.h"
#include "lmtrain/v1/jobs.pb.h"

namespace lmtrain {

v1::JobState ToProto(JobState state);
// JOB_STATE_UNSPECIFIED (and unknown values) map to kQueued.
JobState FromProto(v1::JobState state);

void ToProto(const TrainingMetrics& metrics, v1::Metrics* out);
TrainingMetrics FromProto(const v1::Metrics& metrics);

// Unix milliseconds <-> Timestamp; 0 ms means "unset" (cleared message).
void ToProtoTime(int64_t ms, google::protobuf::Timestamp* out);
int64_t FromProtoTime(const google::protobuf::Timestamp& ts);

}  // namespace lmtrain
