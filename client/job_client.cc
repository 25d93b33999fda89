#include "client/job_client.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/job_file.h"
#include "common/status_macros.h"
#include "proto/grpc_status.h"
#include "proto/server_targets.h"

namespace lmtrain {

JobClient::JobClient(const std::string& target, int rpc_timeout_ms)
    : JobClient(ClientChannelFactory::Plaintext(target), rpc_timeout_ms) {}

JobClient::JobClient(std::shared_ptr<grpc::Channel> channel, int rpc_timeout_ms)
    : stub_(v1::JobService::NewStub(std::move(channel))), rpc_timeout_ms_(rpc_timeout_ms) {}

JobClient::JobClient(const ClientChannelFactory& channels, int rpc_timeout_ms)
    : channels_(channels), rpc_timeout_ms_(rpc_timeout_ms) {}

std::shared_ptr<JobClient::Stub> JobClient::CurrentStub(std::string* target) {
  if (!channels_.has_value()) return stub_;
  *target = channels_->targets().Current();
  if (stub_ == nullptr || *target != stub_target_) {
    stub_ = v1::JobService::NewStub(channels_->NewChannelTo(*target));
    stub_target_ = *target;
  }
  return stub_;
}

bool JobClient::FailOver(const std::string& target, const grpc::Status& status) {
  if (!channels_.has_value() || status.error_code() != grpc::StatusCode::UNAVAILABLE) {
    return false;
  }
  const bool named = ActiveServerIn(status.error_message()).has_value();
  if (channels_->targets().size() < 2 && !named) return false;
  // A new replica to try (named by a standby, or the next): at once. The same one (no
  // replica is active yet): after a pause.
  if (!channels_->targets().Failed(target, FromGrpcStatus(status))) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return true;
}

absl::Status JobClient::Unary(
    const std::string& what, int deadline_ms,
    const std::function<grpc::Status(Stub&, grpc::ClientContext*)>& call) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(deadline_ms);
  while (true) {
    std::string target;
    std::shared_ptr<Stub> stub = CurrentStub(&target);
    grpc::ClientContext ctx;
    SetDeadlineMs(&ctx, deadline_ms);
    grpc::Status s = call(*stub, &ctx);
    if (s.ok()) return absl::OkStatus();
    if (!FailOver(target, s) || std::chrono::steady_clock::now() > give_up) {
      return FromGrpcStatus(s, what);
    }
  }
}

absl::StatusOr<std::string> JobClient::Submit(const std::string& job_file,
                                              const std::string& request_id) {
  LoadJobFileOptions options;
  options.scheduled = true;
  ASSIGN_OR_RETURN(const JobFile file, LoadJobFile(job_file, options));
  return SubmitText(file.text, file.source_name, file.base_dir, request_id);
}

absl::StatusOr<std::string> JobClient::SubmitText(const std::string& text,
                                                  const std::string& source_name,
                                                  const std::string& base_dir,
                                                  const std::string& request_id) {
  v1::SubmitJobRequest req;
  req.set_spec_yaml(text);
  req.set_source_name(source_name);
  req.set_base_dir(base_dir);
  req.set_request_id(request_id);
  v1::SubmitJobResponse resp;
  RETURN_IF_ERROR(Unary("submit", rpc_timeout_ms_, [&](Stub& stub, grpc::ClientContext* ctx) {
    return stub.SubmitJob(ctx, req, &resp);
  }));
  return resp.job_id();
}

absl::StatusOr<v1::PredictResponse> JobClient::Predict(const v1::PredictRequest& request,
                                                       int predict_timeout_ms) {
  v1::PredictResponse resp;
  RETURN_IF_ERROR(Unary("predict", predict_timeout_ms, [&](Stub& stub, grpc::ClientContext* ctx) {
    return stub.Predict(ctx, request, &resp);
  }));
  return resp;
}

absl::StatusOr<v1::Job> JobClient::Get(const std::string& id) {
  v1::GetJobRequest req;
  req.set_job_id(id);
  v1::Job job;
  RETURN_IF_ERROR(Unary("", rpc_timeout_ms_, [&](Stub& stub, grpc::ClientContext* ctx) {
    return stub.GetJob(ctx, req, &job);
  }));
  return job;
}

absl::StatusOr<std::vector<v1::Job>> JobClient::List(int limit) {
  ASSIGN_OR_RETURN(v1::ListJobsResponse page, ListPage(limit, ""));
  return std::vector<v1::Job>(page.jobs().begin(), page.jobs().end());
}

absl::StatusOr<v1::ListJobsResponse> JobClient::ListPage(int page_size,
                                                         const std::string& page_token,
                                                         v1::JobView view) {
  v1::ListJobsRequest req;
  req.set_page_size(page_size);
  req.set_page_token(page_token);
  req.set_view(view);
  v1::ListJobsResponse resp;
  RETURN_IF_ERROR(Unary("", rpc_timeout_ms_, [&](Stub& stub, grpc::ClientContext* ctx) {
    return stub.ListJobs(ctx, req, &resp);
  }));
  return resp;
}

absl::StatusOr<v1::JobState> JobClient::Cancel(const std::string& id) {
  v1::CancelJobRequest req;
  req.set_job_id(id);
  v1::CancelJobResponse resp;
  RETURN_IF_ERROR(Unary("", rpc_timeout_ms_, [&](Stub& stub, grpc::ClientContext* ctx) {
    return stub.CancelJob(ctx, req, &resp);
  }));
  return resp.state();
}

absl::StatusOr<std::string> JobClient::Retry(const std::string& id) {
  v1::RetryJobRequest req;
  req.set_job_id(id);
  v1::RetryJobResponse resp;
  RETURN_IF_ERROR(Unary("", rpc_timeout_ms_, [&](Stub& stub, grpc::ClientContext* ctx) {
    return stub.RetryJob(ctx, req, &resp);
  }));
  return resp.job_id();
}

absl::StatusOr<std::vector<v1::Worker>> JobClient::ListWorkers() {
  v1::ListWorkersRequest req;
  v1::ListWorkersResponse resp;
  RETURN_IF_ERROR(Unary("", rpc_timeout_ms_, [&](Stub& stub, grpc::ClientContext* ctx) {
    return stub.ListWorkers(ctx, req, &resp);
  }));
  return std::vector<v1::Worker>(resp.workers().begin(), resp.workers().end());
}

absl::Status JobClient::Watch(const std::string& id, int64_t after_seq,
                              const std::function<void(const v1::JobEvent&)>& on_event,
                              int reconnect_ms) {
  return Stream(id, after_seq, /*replay_only=*/false, on_event, reconnect_ms);
}

absl::Status JobClient::Events(const std::string& id, bool follow,
                               const std::function<void(const v1::JobEvent&)>& on_event,
                               int reconnect_ms) {
  return Stream(id, 0, /*replay_only=*/!follow, on_event, reconnect_ms);
}

absl::Status JobClient::Stream(const std::string& id, int64_t after_seq, bool replay_only,
                               const std::function<void(const v1::JobEvent&)>& on_event,
                               int reconnect_ms) {
  auto broken_since = std::chrono::steady_clock::now();
  while (true) {
    grpc::ClientContext ctx;
    v1::WatchJobRequest req;
    req.set_job_id(id);
    req.set_after_seq(after_seq);
    req.set_replay_only(replay_only);
    std::string target;
    auto reader = CurrentStub(&target)->WatchJob(&ctx, req);
    v1::JobEvent event;
    while (reader->Read(&event)) {
      broken_since = std::chrono::steady_clock::now();
      after_seq = event.seq();
      on_event(event);
    }
    grpc::Status s = reader->Finish();
    if (s.ok()) return absl::OkStatus();
    if (s.error_code() != grpc::StatusCode::UNAVAILABLE) return FromGrpcStatus(s, "watch");
    auto now = std::chrono::steady_clock::now();
    if (now - broken_since > std::chrono::milliseconds(reconnect_ms))
      return FromGrpcStatus(s, "watch");
    if (!FailOver(target, s)) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace lmtrain
