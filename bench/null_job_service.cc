#include "bench/null_job_service.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "proto/grpc_status.h"
#include "server/server.h"
#include "server/sync_server_threads.h"

namespace lmtrain::bench {

grpc::Status NullJobService::SubmitJob(grpc::ServerContext*, const v1::SubmitJobRequest*,
                                       v1::SubmitJobResponse* resp) {
  resp->set_job_id(absl::StrCat(++next_id_));
  return grpc::Status::OK;
}

grpc::Status NullJobService::GetJob(grpc::ServerContext*, const v1::GetJobRequest*, v1::Job* resp) {
  *resp = replies_.job;
  return grpc::Status::OK;
}

grpc::Status NullJobService::ListJobs(grpc::ServerContext*, const v1::ListJobsRequest*,
                                      v1::ListJobsResponse* resp) {
  *resp = replies_.list;
  return grpc::Status::OK;
}

grpc::Status NullJobService::CancelJob(grpc::ServerContext*, const v1::CancelJobRequest*,
                                       v1::CancelJobResponse* resp) {
  resp->set_state(v1::CANCELLED);
  return grpc::Status::OK;
}

grpc::Status NullJobService::WatchJob(grpc::ServerContext*, const v1::WatchJobRequest*,
                                      grpc::ServerWriter<v1::JobEvent>* writer) {
  for (const v1::JobEvent& e : replies_.events) {
    if (!writer->Write(e)) return grpc::Status::CANCELLED;
  }
  return grpc::Status::OK;
}

namespace {

// The call's reactor, finished with OK: the reply is already filled in.
grpc::ServerUnaryReactor* Answered(grpc::CallbackServerContext* ctx) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace

grpc::ServerUnaryReactor* CallbackNullJobService::SubmitJob(grpc::CallbackServerContext* ctx,
                                                            const v1::SubmitJobRequest*,
                                                            v1::SubmitJobResponse* resp) {
  resp->set_job_id(absl::StrCat(++next_id_));
  return Answered(ctx);
}

grpc::ServerUnaryReactor* CallbackNullJobService::GetJob(grpc::CallbackServerContext* ctx,
                                                         const v1::GetJobRequest*, v1::Job* resp) {
  *resp = replies_.job;
  return Answered(ctx);
}

grpc::ServerUnaryReactor* CallbackNullJobService::ListJobs(grpc::CallbackServerContext* ctx,
                                                           const v1::ListJobsRequest*,
                                                           v1::ListJobsResponse* resp) {
  *resp = replies_.list;
  return Answered(ctx);
}

grpc::ServerUnaryReactor* CallbackNullJobService::CancelJob(grpc::CallbackServerContext* ctx,
                                                            const v1::CancelJobRequest*,
                                                            v1::CancelJobResponse* resp) {
  resp->set_state(v1::CANCELLED);
  return Answered(ctx);
}

namespace {

// Writes `events` one at a time, then finishes; deletes itself when done.
class CannedEventWriter final : public grpc::ServerWriteReactor<v1::JobEvent> {
 public:
  explicit CannedEventWriter(const std::vector<v1::JobEvent>* events) : events_(events) {
    WriteNext();
  }
  void OnWriteDone(bool ok) override {
    if (!ok) return Finish(grpc::Status::CANCELLED);
    WriteNext();
  }
  void OnDone() override { delete this; }

 private:
  void WriteNext() {
    if (next_ == events_->size()) return Finish(grpc::Status::OK);
    StartWrite(&(*events_)[next_++]);
  }
  const std::vector<v1::JobEvent>* events_;
  size_t next_ = 0;
};

}  // namespace

grpc::ServerWriteReactor<v1::JobEvent>* CallbackNullJobService::WatchJob(
    grpc::CallbackServerContext*, const v1::WatchJobRequest*) {
  return new CannedEventWriter(&replies_.events);
}

absl::StatusOr<CannedReplies> CaptureReplies(v1::JobService::Stub& stub, const std::string& job_id,
                                             int list_limit) {
  CannedReplies r;
  {
    v1::ListJobsRequest req;
    req.set_limit(list_limit);
    grpc::ClientContext ctx;
    if (grpc::Status s = stub.ListJobs(&ctx, req, &r.list); !s.ok()) {
      return FromGrpcStatus(s, "capture list");
    }
  }
  if (job_id.empty()) return r;
  v1::GetJobRequest get;
  get.set_job_id(job_id);
  grpc::ClientContext get_ctx;
  if (grpc::Status s = stub.GetJob(&get_ctx, get, &r.job); !s.ok()) {
    return FromGrpcStatus(s, "capture get");
  }
  v1::WatchJobRequest watch;
  watch.set_job_id(job_id);
  watch.set_replay_only(true);
  grpc::ClientContext watch_ctx;
  auto reader = stub.WatchJob(&watch_ctx, watch);
  for (v1::JobEvent e; reader->Read(&e);) r.events.push_back(e);
  if (grpc::Status s = reader->Finish(); !s.ok()) return FromGrpcStatus(s, "capture watch");
  return r;
}

CeilingServer::CeilingServer(CannedReplies replies, CeilingApi api) {
  if (api == CeilingApi::kCallback) {
    service_ = std::make_unique<CallbackNullJobService>(std::move(replies));
  } else {
    service_ = std::make_unique<NullJobService>(std::move(replies));
  }
}

absl::StatusOr<std::unique_ptr<CeilingServer>> CeilingServer::Start(CannedReplies replies,
                                                                    CeilingApi api) {
  std::unique_ptr<CeilingServer> s(new CeilingServer(std::move(replies), api));
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &s->port_);
  builder.RegisterService(s->service_.get());
  // As Server::StartGrpc builds lm-server's.
  builder.SetMaxReceiveMessageSize(Server::Options().max_receive_message_bytes);
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  KeepSyncServerThreads(&builder);
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr || s->port_ == 0) {
    return absl::UnavailableError("the do-nothing JobService cannot listen on 127.0.0.1");
  }
  return s;
}

CeilingServer::~CeilingServer() {
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  }
}

}  // namespace lmtrain::bench
