// NullJobService: a do-nothing lmtrain.v1.JobService, the ceiling lm-bench-api measures
// lm-server against (`lm-bench-api --ceiling`). Its handlers touch no store: they answer with
// canned messages captured from the real server (same fields, same sizes), so the same client
// load against it measures what gRPC itself costs on the box.
//
//   SubmitJob  a fresh decimal job id per call ("1", "2", ...), as the real server answers.
//   GetJob     the canned Job, whatever id is asked.
//   ListJobs   the canned ListJobsResponse.
//   CancelJob  CANCELLED.
//   WatchJob   the canned events, then the stream ends (a replay of a finished job).
//   others     UNIMPLEMENTED (the generated default).
//
// CeilingServer serves it on 127.0.0.1 (a free port) with the ServerBuilder options lm-server
// uses (server/server.cc: maximum request size, no SO_REUSEPORT, the idle threads it keeps),
// but none of lm-server's interceptors: the ratio of a real figure to this one prices
// everything lm-server adds.
//
// Thread-safe: the canned messages are read-only after construction; the id counter is atomic.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lmtrain/v1/jobs.grpc.pb.h"

namespace lmtrain::bench {

struct CannedReplies {
  v1::Job job;                       // GetJob's answer.
  v1::ListJobsResponse list;         // ListJobs' answer.
  std::vector<v1::JobEvent> events;  // WatchJob's stream.
};

class NullJobService final : public v1::JobService::Service {
 public:
  explicit NullJobService(CannedReplies replies) : replies_(std::move(replies)) {}

  grpc::Status SubmitJob(grpc::ServerContext*, const v1::SubmitJobRequest*,
                         v1::SubmitJobResponse* resp) override;
  grpc::Status GetJob(grpc::ServerContext*, const v1::GetJobRequest*, v1::Job* resp) override;
  grpc::Status ListJobs(grpc::ServerContext*, const v1::ListJobsRequest*,
                        v1::ListJobsResponse* resp) override;
  grpc::Status CancelJob(grpc::ServerContext*, const v1::CancelJobRequest*,
                         v1::CancelJobResponse* resp) override;
  grpc::Status WatchJob(grpc::ServerContext*, const v1::WatchJobRequest*,
                        grpc::ServerWriter<v1::JobEvent>* writer) override;

 private:
  const CannedReplies replies_;
  std::atomic<int64_t> next_id_{0};
};

// The real server's answers to copy: GetJob and a WatchJob replay of `job_id` (skipped when
// empty), ListJobs(limit `list_limit`). The first failing call's status.
absl::StatusOr<CannedReplies> CaptureReplies(v1::JobService::Stub& stub, const std::string& job_id,
                                             int list_limit);

// The same do-nothing JobService on gRPC's callback API: each handler answers inline on the
// thread that read the request (gRPC's own), instead of on a synchronous server's handler
// thread. WatchJob writes the canned events one after another from the write reactor.
class CallbackNullJobService final : public v1::JobService::CallbackService {
 public:
  explicit CallbackNullJobService(CannedReplies replies) : replies_(std::move(replies)) {}

  grpc::ServerUnaryReactor* SubmitJob(grpc::CallbackServerContext* ctx, const v1::SubmitJobRequest*,
                                      v1::SubmitJobResponse* resp) override;
  grpc::ServerUnaryReactor* GetJob(grpc::CallbackServerContext* ctx, const v1::GetJobRequest*,
                                   v1::Job* resp) override;
  grpc::ServerUnaryReactor* ListJobs(grpc::CallbackServerContext* ctx, const v1::ListJobsRequest*,
                                     v1::ListJobsResponse* resp) override;
  grpc::ServerUnaryReactor* CancelJob(grpc::CallbackServerContext* ctx, const v1::CancelJobRequest*,
                                      v1::CancelJobResponse* resp) override;
  grpc::ServerWriteReactor<v1::JobEvent>* WatchJob(grpc::CallbackServerContext* ctx,
                                                   const v1::WatchJobRequest*) override;

 private:
  const CannedReplies replies_;
  std::atomic<int64_t> next_id_{0};
};

// Which API the do-nothing service answers on.
enum class CeilingApi { kSync, kCallback };

// Owns a do-nothing JobService and the gRPC server serving it; Shutdown on destruction.
class CeilingServer {
 public:
  // Unavailable when no port can be bound.
  static absl::StatusOr<std::unique_ptr<CeilingServer>> Start(CannedReplies replies,
                                                              CeilingApi api = CeilingApi::kSync);
  ~CeilingServer();
  CeilingServer(const CeilingServer&) = delete;
  CeilingServer& operator=(const CeilingServer&) = delete;

  int port() const { return port_; }

 private:
  explicit CeilingServer(CannedReplies replies, CeilingApi api);

  std::unique_ptr<grpc::Service> service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace lmtrain::bench
