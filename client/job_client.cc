#include "client/job_client.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/job_file.h"
#include "common/status_macros.h"
#include "proto/grpc_status.h"

namespace lmtrain {

JobClient::JobClient(const std::string& target, int rpc_timeout_ms)
    : JobClient(grpc::CreateChannel(target, grpc::InsecureChannelCredentials()),
                rpc_timeout_ms) {}

JobClient::JobClient(std::shared_ptr<grpc::Channel> channel, int rpc_timeout_ms)
    : channel_(std::move(channel)),
      stub_(v1::JobService::NewStub(channel_)),
      rpc_timeout_ms_(rpc_timeout_ms) {}

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
  grpc::ClientContext ctx;
  SetDeadlineMs(&ctx, rpc_timeout_ms_);
  RETURN_IF_ERROR(FromGrpcStatus(stub_->SubmitJob(&ctx, req, &resp), "submit"));
  return resp.job_id();
}

absl::StatusOr<v1::PredictResponse> JobClient::Predict(const v1::PredictRequest& request,
                                                       int predict_timeout_ms) {
  v1::PredictResponse resp;
  grpc::ClientContext ctx;
  SetDeadlineMs(&ctx, predict_timeout_ms);
  RETURN_IF_ERROR(FromGrpcStatus(stub_->Predict(&ctx, request, &resp), "predict"));
  return resp;
}

absl::StatusOr<v1::Job> JobClient::Get(const std::string& id) {
  v1::GetJobRequest req;
  req.set_job_id(id);
  v1::Job job;
  grpc::ClientContext ctx;
  SetDeadlineMs(&ctx, rpc_timeout_ms_);
  RETURN_IF_ERROR(FromGrpcStatus(stub_->GetJob(&ctx, req, &job), ""));
  return job;
}

absl::StatusOr<std::vector<v1::Job>> JobClient::List(int limit) {
  v1::ListJobsRequest req;
  req.set_limit(limit);
  v1::ListJobsResponse resp;
  grpc::ClientContext ctx;
  SetDeadlineMs(&ctx, rpc_timeout_ms_);
  RETURN_IF_ERROR(FromGrpcStatus(stub_->ListJobs(&ctx, req, &resp), ""));
  return std::vector<v1::Job>(resp.jobs().begin(), resp.jobs().end());
}

absl::StatusOr<v1::JobState> JobClient::Cancel(const std::string& id) {
  v1::CancelJobRequest req;
  req.set_job_id(id);
  v1::CancelJobResponse resp;
  grpc::ClientContext ctx;
  SetDeadlineMs(&ctx, rpc_timeout_ms_);
  RETURN_IF_ERROR(FromGrpcStatus(stub_->CancelJob(&ctx, req, &resp), ""));
  return resp.state();
}

absl::StatusOr<std::string> JobClient::Retry(const std::string& id) {
  v1::RetryJobRequest req;
  req.set_job_id(id);
  v1::RetryJobResponse resp;
  grpc::ClientContext ctx;
  SetDeadlineMs(&ctx, rpc_timeout_ms_);
  RETURN_IF_ERROR(FromGrpcStatus(stub_->RetryJob(&ctx, req, &resp), ""));
  return resp.job_id();
}

absl::StatusOr<std::vector<v1::Worker>> JobClient::ListWorkers() {
  v1::ListWorkersRequest req;
  v1::ListWorkersResponse resp;
  grpc::ClientContext ctx;
  SetDeadlineMs(&ctx, rpc_timeout_ms_);
  RETURN_IF_ERROR(FromGrpcStatus(stub_->ListWorkers(&ctx, req, &resp), ""));
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
    auto reader = stub_->WatchJob(&ctx, req);
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
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace lmtrain
