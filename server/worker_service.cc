#include "server/worker_service.h"

#include <algorithm>

#include "proto/grpc_status.h"
#include "proto_convert.h"

namespace lmtrain {
namespace {

constexpr int kMaxWaitMs = 30000;
constexpr int kHeartbeatIntervalMs = 1000;

WorkerReport FromProto(const v1::WorkerJobEvent& e) {
  switch (e.kind_case()) {
    case v1::WorkerJobEvent::kStarted:
      return JobStartedReport{e.started().pid()};
    case v1::WorkerJobEvent::kMetrics:
      return lmtrain::FromProto(e.metrics());
    case v1::WorkerJobEvent::kCheckpoint:
      return CheckpointRecord{e.checkpoint().step(), e.checkpoint().path(),
                              FromProtoTime(e.checkpoint().created_at())};
    case v1::WorkerJobEvent::kExited:
      return JobExitedReport{e.exited().exit_code(), e.exited().signal(), e.exited().error(),
                             e.exited().cancelled()};
    case v1::WorkerJobEvent::kLog:
    default:
      return LogEvent{e.log().stream(), e.log().text()};
  }
}

std::vector<RankRef> Ranks(const google::protobuf::RepeatedPtrField<v1::RunningRank>& running) {
  std::vector<RankRef> out;
  for (const v1::RunningRank& r : running) {
    out.push_back({r.job_id(), r.rank(), r.attempt(), {r.gpus().begin(), r.gpus().end()}});
  }
  return out;
}

}  // namespace

absl::Status WorkerServiceImpl::CheckWorker(const grpc::ServerContext* ctx,
                                            const std::string& worker_id) {
  absl::StatusOr<Principal> caller = auth_->Caller(ctx);
  if (!caller.ok()) return caller.status();
  return binding_.Check(worker_id, *caller);
}

grpc::Status WorkerServiceImpl::RegisterWorker(grpc::ServerContext* ctx,
                                               const v1::RegisterWorkerRequest* req,
                                               v1::RegisterWorkerResponse* resp) {
  absl::StatusOr<Principal> caller = auth_->Caller(ctx);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (req->slots() <= 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "slots must be > 0");
  }
  WorkerInfo info;
  info.name = req->name();
  info.hostname = req->hostname();
  info.slots = req->slots();
  for (const v1::Device& d : req->devices()) {
    info.devices.push_back({d.type(), d.index(), d.name(), d.memory_bytes(), d.uuid()});
  }
  info.labels.insert(req->labels().begin(), req->labels().end());
  info.advertise_address = req->advertise_address();
  if (req->rendezvous_port_count() > 0) {
    info.rendezvous_port_base = req->rendezvous_port_base();
    info.rendezvous_port_count = req->rendezvous_port_count();
  }
  resp->set_worker_id(dispatcher_->RegisterWorker(info, Ranks(req->running())));
  binding_.Bind(resp->worker_id(), *caller);
  resp->set_heartbeat_interval_ms(kHeartbeatIntervalMs);
  return grpc::Status::OK;
}

grpc::Status WorkerServiceImpl::Sync(grpc::ServerContext* ctx, const v1::SyncRequest* req,
                                     v1::SyncResponse* resp) {
  if (absl::Status s = CheckWorker(ctx, req->worker_id()); !s.ok()) return ToGrpcStatus(s);
  const std::vector<RankRef> running = Ranks(req->running());
  // Parks on this worker's own wake-up: an event that places a rank on it or stops one of its
  // ranks releases it, and no other worker's long-poll.
  absl::StatusOr<SyncResult> result = dispatcher_->SyncWait(
      req->worker_id(), running, absl::Milliseconds(std::clamp(req->wait_ms(), 0, kMaxWaitMs)));
  if (!result.ok()) return ToGrpcStatus(result.status());
  for (const JobAssignment& a : result->assignments) {
    v1::Assignment* out = resp->add_assignments();
    out->set_job_id(a.job_id);
    out->set_spec_yaml(a.spec_yaml);
    out->set_output_dir(a.output_dir);
    out->set_attempt(a.attempt);
    out->set_rank(a.rank);
    out->set_world_size(a.world_size);
    out->set_local_rank(a.local_rank);
    out->set_master_addr(a.master_addr);
    out->set_master_port(a.master_port);
    out->set_resume(a.resume);
    out->mutable_gpus()->Add(a.gpus.begin(), a.gpus.end());
  }
  for (const RankRef& ref : result->stop) {
    v1::RunningRank* out = resp->add_stop();
    out->set_job_id(ref.job_id);
    out->set_rank(ref.rank);
    out->set_attempt(ref.attempt);
  }
  resp->set_reregister(result->reregister);
  return grpc::Status::OK;
}

grpc::Status WorkerServiceImpl::ReportJobEvents(grpc::ServerContext* ctx,
                                                const v1::ReportJobEventsRequest* req,
                                                v1::ReportJobEventsResponse* resp) {
  if (absl::Status s = CheckWorker(ctx, req->worker_id()); !s.ok()) return ToGrpcStatus(s);
  std::vector<WorkerReport> reports;
  reports.reserve(req->events_size());
  for (const v1::WorkerJobEvent& e : req->events()) reports.push_back(FromProto(e));
  auto cancel = dispatcher_->ReportEvents(
      req->worker_id(), RankRef{req->job_id(), req->rank(), req->attempt()}, reports);
  if (!cancel.ok()) return ToGrpcStatus(cancel.status());
  resp->set_cancel(*cancel);
  return grpc::Status::OK;
}

}  // namespace lmtrain
