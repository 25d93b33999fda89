// Conversions between the worker agent's messages (worker/agent/worker_messages.h) and their
// lmtrain.v1 WorkerService messages: the one place each mapping is written, used by
// GrpcServerClient. Shared messages (Metrics, Timestamp) go through proto/proto_convert.h.
#pragma once

#include "lmtrain/v1/worker.pb.h"
#include "worker/agent/worker_messages.h"

namespace lmtrain {

void ToProto(const RunningRank& rank, v1::RunningRank* out);
RunningRank FromProto(const v1::RunningRank& rank);

void ToProto(const WorkerRegistration& registration, v1::RegisterWorkerRequest* out);
void ToProto(const WorkerSync& sync, v1::SyncRequest* out);

void ToProto(const RankAssignment& assignment, v1::Assignment* out);
RankAssignment FromProto(const v1::Assignment& assignment);
SyncOrders FromProto(const v1::SyncResponse& response);

void ToProto(const RankEvent& event, v1::WorkerJobEvent* out);
// An event with no kind set reads as an empty RankLog.
RankEvent FromProto(const v1::WorkerJobEvent& event);
void ToProto(const RankEventBatch& batch, v1::ReportJobEventsRequest* out);

}  // namespace lmtrain
