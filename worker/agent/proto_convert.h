// Conversions between the worker agent's messages (worker/agent/worker_messages.h) and their
// lmtrain.v1 WorkerService messages, in the direction the worker needs them: the one place each
// mapping is written, used by GrpcServerClient. Shared messages (Metrics, Timestamp) go through
// proto/proto_convert.h.
#pragma once

#include "lmtrain/v1/worker.pb.h"
#include "worker/agent/worker_messages.h"

namespace lmtrain {

void ToProto(const RunningRank& rank, v1::RunningRank* out);
RunningRank FromProto(const v1::RunningRank& rank);

void ToProto(const WorkerRegistration& registration, v1::RegisterWorkerRequest* out);
void ToProto(const WorkerSync& sync, v1::SyncRequest* out);

RankAssignment FromProto(const v1::Assignment& assignment);
SyncOrders FromProto(const v1::SyncResponse& response);

void ToProto(const RankEvent& event, v1::WorkerJobEvent* out);
void ToProto(const RankEventBatch& batch, v1::ReportJobEventsRequest* out);

}  // namespace lmtrain
