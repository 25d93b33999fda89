// JobServiceImpl: the public lmtrain.v1.JobService. A thin adapter: ask GrpcAuth who calls
// (or end the call with its denial), unpack, call JobManager, pack. Every method is on gRPC's
// sync API but WatchJob, which is on the callback API: each stream is a WatchReactor fed by
// the WatchFanout (server/watch_fanout.h), so watchers hold no handler thread while they wait.
//
// Predict holds its handler thread while lm-train predict runs on the job's checkpoint
// (CheckpointPredictor, bounded by its timeout); UNIMPLEMENTED when no predictor is given.
//
// With authentication on: SubmitJob's `user` is replaced by the caller's; ListJobs returns
// only the caller's jobs unless the caller is an admin; GetJob, CancelJob, WatchJob, RetryJob
// and Predict of another user's job are PERMISSION_DENIED (an unknown id stays NOT_FOUND).
//
// ListJobs keeps the serialized bytes of the jobs it has listed, each at the version it was made
// at (JobBytesCache, at most kListCacheBytes), and copies them into later replies while the job
// is unchanged (server/list_jobs_reply.h).
#pragma once

#include "lmtrain/v1/jobs.grpc.pb.h"
#include "server/auth/grpc_auth.h"
#include "server/checkpoint_predictor.h"
#include "server/job_bytes_cache.h"
#include "server/job_manager.h"
#include "server/watch_fanout.h"

namespace lmtrain {

class JobServiceImpl final
    : public v1::JobService::WithCallbackMethod_WatchJob<v1::JobService::Service> {
 public:
  // The jobs' bytes ListJobs keeps: at the few hundred bytes a typical job
  // serializes to, tens of thousands of jobs (the newest pages, which lists read most).
  static constexpr size_t kListCacheBytes = 32 << 20;

  // None is owned; `predictor` may be null (Predict is then UNIMPLEMENTED). The fanout must
  // outlive every WatchJob stream (the grpc::Server this service is registered in).
  JobServiceImpl(JobManager* manager, const GrpcAuth* auth, WatchFanout* fanout,
                 const CheckpointPredictor* predictor = nullptr)
      : manager_(manager), auth_(auth), fanout_(fanout), predictor_(predictor) {}

  grpc::Status SubmitJob(grpc::ServerContext*, const v1::SubmitJobRequest* req,
                         v1::SubmitJobResponse* resp) override;
  grpc::Status GetJob(grpc::ServerContext*, const v1::GetJobRequest* req, v1::Job* resp) override;
  grpc::Status ListJobs(grpc::ServerContext*, const v1::ListJobsRequest* req,
                        v1::ListJobsResponse* resp) override;
  grpc::Status CancelJob(grpc::ServerContext*, const v1::CancelJobRequest* req,
                         v1::CancelJobResponse* resp) override;
  grpc::ServerWriteReactor<v1::JobEvent>* WatchJob(grpc::CallbackServerContext* ctx,
                                                   const v1::WatchJobRequest* req) override;
  grpc::Status RetryJob(grpc::ServerContext*, const v1::RetryJobRequest* req,
                        v1::RetryJobResponse* resp) override;
  grpc::Status ListWorkers(grpc::ServerContext*, const v1::ListWorkersRequest* req,
                           v1::ListWorkersResponse* resp) override;
  grpc::Status Predict(grpc::ServerContext*, const v1::PredictRequest* req,
                       v1::PredictResponse* resp) override;

 private:
  // The caller, if it may touch job `id` (empty: no job), else the status to end with.
  absl::StatusOr<Principal> Authorize(const grpc::ServerContextBase* ctx, const std::string& id);

  JobManager* const manager_;
  const GrpcAuth* const auth_;
  WatchFanout* const fanout_;
  const CheckpointPredictor* const predictor_;
  JobBytesCache list_cache_{kListCacheBytes};
};

// Record -> message mappings used by the service (exposed for tests).
void JobToProto(const JobRecord& job, v1::Job* out);
void EventToProto(const EventRecord& event, v1::JobEvent* out);
void WorkerToProto(const WorkerStatus& worker, v1::Worker* out);

}  // namespace lmtrain
