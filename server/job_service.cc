#include "server/job_service.h"

#include "proto/grpc_status.h"
#include "proto_convert.h"
#include "server/list_jobs_reply.h"
#include "server/watch_reactor.h"

namespace lmtrain {
namespace {

constexpr int kDefaultListPageSize = 100;
constexpr int kMaxListPageSize = 10000;

void CheckpointToProto(const CheckpointRecord& c, v1::Checkpoint* out) {
  out->set_step(c.step);
  out->set_path(c.path);
  ToProtoTime(c.created_at_ms, out->mutable_created_at());
}

// page_size, else the deprecated limit, else 100; at most kMaxListPageSize.
int ListPageSize(const v1::ListJobsRequest& req) {
  const int asked = req.page_size() > 0 ? req.page_size() : req.limit();
  return asked > 0 ? std::min(asked, kMaxListPageSize) : kDefaultListPageSize;
}

}  // namespace

void JobToProto(const JobRecord& job, v1::Job* out) {
  out->set_id(job.id);
  out->set_name(job.name);
  out->set_task(job.task);
  out->set_state(ToProto(job.state));
  out->set_spec_yaml(job.spec_yaml);
  out->set_priority(job.priority);
  ToProtoTime(job.created_at_ms, out->mutable_created_at());
  if (job.started_at_ms) ToProtoTime(job.started_at_ms, out->mutable_started_at());
  if (job.finished_at_ms) ToProtoTime(job.finished_at_ms, out->mutable_finished_at());
  ToProto(job.metrics, out->mutable_metrics());
  for (const CheckpointRecord& c : job.checkpoints) CheckpointToProto(c, out->add_checkpoints());
  out->set_error(job.error);
  out->set_worker_id(job.worker_id);
  if (job.exit_code.has_value()) out->set_exit_code(*job.exit_code);
  out->set_output_dir(job.output_dir);
  out->set_user(job.user);
  v1::Resources* r = out->mutable_resources();
  r->set_workers(job.resources.workers);
  r->set_slots_per_worker(job.resources.slots_per_worker);
  r->mutable_selector()->insert(job.resources.selector.begin(), job.resources.selector.end());
  r->set_max_retries(job.resources.max_retries);
  r->set_gpus_per_worker(job.resources.gpus_per_worker);
  out->set_retries(job.retries);
  for (const AttemptRecord& a : job.attempts) {
    v1::Attempt* p = out->add_attempts();
    p->set_number(a.number);
    for (const std::string& w : a.worker_ids) p->add_worker_ids(w);
    ToProtoTime(a.scheduled_at_ms, p->mutable_scheduled_at());
    if (a.ended_at_ms) ToProtoTime(a.ended_at_ms, p->mutable_ended_at());
    p->set_outcome(a.outcome);
    for (const std::vector<int>& gpus : a.rank_gpus) {
      p->add_rank_gpus()->mutable_gpus()->Add(gpus.begin(), gpus.end());
    }
  }
}

void EventToProto(const EventRecord& e, v1::JobEvent* out) {
  out->set_seq(e.seq);
  out->set_job_id(e.job_id);
  ToProtoTime(e.time_ms, out->mutable_time());
  if (auto* s = std::get_if<StateChangeEvent>(&e.payload)) {
    out->mutable_state_changed()->set_state(ToProto(s->state));
    out->mutable_state_changed()->set_reason(s->reason);
  } else if (auto* m = std::get_if<TrainingMetrics>(&e.payload)) {
    ToProto(*m, out->mutable_metrics());
  } else if (auto* c = std::get_if<CheckpointRecord>(&e.payload)) {
    CheckpointToProto(*c, out->mutable_checkpoint());
  } else if (auto* l = std::get_if<LogEvent>(&e.payload)) {
    out->mutable_log()->set_stream(l->stream);
    out->mutable_log()->set_text(l->text);
  }
}

absl::StatusOr<Principal> JobServiceImpl::Authorize(const grpc::ServerContextBase* ctx,
                                                    const std::string& id) {
  absl::StatusOr<Principal> caller = auth_->Caller(ctx);
  if (!caller.ok() || id.empty()) return caller;
  if (absl::Status access = manager_->CheckAccess(*caller, id); !access.ok()) return access;
  return caller;
}

void WorkerToProto(const WorkerStatus& w, v1::Worker* out) {
  out->set_id(w.id);
  out->set_name(w.info.name);
  out->set_hostname(w.info.hostname);
  out->set_slots(w.info.slots);
  out->set_used_slots(w.used_slots);
  out->mutable_labels()->insert(w.info.labels.begin(), w.info.labels.end());
  for (const DeviceInfo& d : w.info.devices) {
    v1::Device* p = out->add_devices();
    p->set_type(d.type);
    p->set_index(d.index);
    p->set_name(d.name);
    p->set_memory_bytes(d.memory_bytes);
    p->set_uuid(d.uuid);
  }
  out->set_used_gpus(w.used_gpus);
  ToProtoTime(w.last_seen_ms, out->mutable_last_seen());
  for (const std::string& j : w.running_job_ids) out->add_running_job_ids(j);
}

grpc::Status JobServiceImpl::SubmitJob(grpc::ServerContext* ctx, const v1::SubmitJobRequest* req,
                                       v1::SubmitJobResponse* resp) {
  absl::StatusOr<Principal> caller = Authorize(ctx, "");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  SubmitRequest r{req->spec_yaml(), req->source_name(), req->base_dir(), req->request_id(),
                  caller->authenticated ? caller->user : req->user()};
  if (r.source_name.empty()) r.source_name = "job.yaml";
  auto id = manager_->Submit(r);
  if (!id.ok()) return ToGrpcStatus(id.status());
  resp->set_job_id(*id);
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::GetJob(grpc::ServerContext* ctx, const v1::GetJobRequest* req,
                                    v1::Job* resp) {
  if (auto caller = Authorize(ctx, req->job_id()); !caller.ok()) {
    return ToGrpcStatus(caller.status());
  }
  auto job = manager_->Get(req->job_id());
  if (!job.ok()) return ToGrpcStatus(job.status());
  JobToProto(*job, resp);
  if (job->state == JobState::kQueued) resp->set_waiting_reason(manager_->WaitingReason(job->id));
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::ListJobs(grpc::ServerContext* ctx, const v1::ListJobsRequest* req,
                                      v1::ListJobsResponse* resp) {
  absl::StatusOr<Principal> caller = Authorize(ctx, "");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  JobFilter filter;
  for (int s : req->states()) filter.states.push_back(FromProto(static_cast<v1::JobState>(s)));
  filter.limit = ListPageSize(*req);
  filter.view = req->view() == v1::JOB_VIEW_BASIC ? JobView::kBasic : JobView::kFull;
  ListJobsReply reply(&list_cache_, filter.view);
  filter.skip_cached = reply.SkipCached();
  auto page = manager_->ListPageFor(*caller, filter, req->page_token());
  if (!page.ok()) return ToGrpcStatus(page.status());
  reply.Fill(*page, JobToProto, manager_->WaitingReasons(page->jobs), resp);
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::CancelJob(grpc::ServerContext* ctx, const v1::CancelJobRequest* req,
                                       v1::CancelJobResponse* resp) {
  if (auto caller = Authorize(ctx, req->job_id()); !caller.ok()) {
    return ToGrpcStatus(caller.status());
  }
  auto state = manager_->Cancel(req->job_id(), req->reason());
  if (!state.ok()) return ToGrpcStatus(state.status());
  resp->set_state(ToProto(*state));
  return grpc::Status::OK;
}

grpc::ServerWriteReactor<v1::JobEvent>* JobServiceImpl::WatchJob(
    grpc::CallbackServerContext* ctx, const v1::WatchJobRequest* req) {
  if (auto caller = Authorize(ctx, req->job_id()); !caller.ok()) {
    return WatchReactor::Refuse(caller.status());
  }
  return new WatchReactor(fanout_, {req->job_id(), req->after_seq(), req->replay_only()});
}

grpc::Status JobServiceImpl::RetryJob(grpc::ServerContext* ctx, const v1::RetryJobRequest* req,
                                      v1::RetryJobResponse* resp) {
  if (auto caller = Authorize(ctx, req->job_id()); !caller.ok()) {
    return ToGrpcStatus(caller.status());
  }
  auto id = manager_->Retry(req->job_id());
  if (!id.ok()) return ToGrpcStatus(id.status());
  resp->set_job_id(*id);
  resp->set_retry_of(req->job_id());
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::ListWorkers(grpc::ServerContext* ctx, const v1::ListWorkersRequest*,
                                         v1::ListWorkersResponse* resp) {
  if (auto caller = Authorize(ctx, ""); !caller.ok()) return ToGrpcStatus(caller.status());
  for (const WorkerStatus& w : manager_->ListWorkers()) WorkerToProto(w, resp->add_workers());
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::Predict(grpc::ServerContext* ctx, const v1::PredictRequest* req,
                                     v1::PredictResponse* resp) {
  if (auto caller = Authorize(ctx, req->job_id()); !caller.ok()) {
    return ToGrpcStatus(caller.status());
  }
  if (predictor_ == nullptr) {
    return ToGrpcStatus(absl::UnimplementedError("this server does not run predictions"));
  }
  auto job = manager_->Get(req->job_id());
  if (!job.ok()) return ToGrpcStatus(job.status());
  PredictInput input;
  if (req->step() > 0) input.step = req->step();
  input.fill_mask = req->fill_mask();
  input.generate = req->generate();
  if (req->has_top_k()) input.top_k = req->top_k();
  if (req->has_max_new_tokens()) input.max_new_tokens = req->max_new_tokens();
  if (req->has_temperature()) input.temperature = req->temperature();
  if (req->has_seed()) input.seed = req->seed();
  auto output = predictor_->Predict(*job, input);
  if (!output.ok()) return ToGrpcStatus(output.status());
  resp->set_step(output->step);
  resp->set_result_json(std::move(output->json));
  return grpc::Status::OK;
}

}  // namespace lmtrain
