// JobClient: lmctl's view of lm-server's JobService (the CLI is a thin layer over it).
// Submit() loads the job file locally first (LoadJobFile, common/job_file.h: the parser the
// server runs, with the checks a scheduled job gets) and sends its text with the file's
// folder, so relative paths resolve where the user wrote them.
// Not thread-safe: one caller at a time (lmctl runs one command).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lmtrain/v1/jobs.grpc.pb.h"
#include "proto/client_channel.h"

namespace lmtrain {

class JobClient {
 public:
  // `target` "host:port" (or replicas "host:port,host:port", plaintext); calls time out after
  // rpc_timeout_ms (Watch excepted).
  explicit JobClient(const std::string& target, int rpc_timeout_ms = 10000);
  // Over `channel` (TLS and token as made by ClientChannelFactory).
  explicit JobClient(std::shared_ptr<grpc::Channel> channel, int rpc_timeout_ms = 10000);
  // Over channels to `channels`' targets: with several lm-server replicas, a call answered
  // UNAVAILABLE (a standby naming the active server, or a dead connection) is tried again on
  // the named or next replica until rpc_timeout_ms has passed. Submits are safe to repeat
  // when they carry a request id.
  explicit JobClient(const ClientChannelFactory& channels, int rpc_timeout_ms = 10000);

  // Reads and validates job_file, submits it; returns the job id.
  absl::StatusOr<std::string> Submit(const std::string& job_file, const std::string& request_id);
  // Submits a job file's text as is (validated by the server only); `base_dir` absolute.
  absl::StatusOr<std::string> SubmitText(const std::string& text, const std::string& source_name,
                                         const std::string& base_dir,
                                         const std::string& request_id);
  absl::StatusOr<v1::Job> Get(const std::string& id);
  // The newest `limit` jobs (the first page of ListPage).
  absl::StatusOr<std::vector<v1::Job>> List(int limit);
  // One page of jobs, newest first (ListJobs): `page_token` "" for the first page, else the
  // next_page_token of the previous one; `view` picks the fields of each job.
  absl::StatusOr<v1::ListJobsResponse> ListPage(int page_size, const std::string& page_token,
                                                v1::JobView view = v1::JOB_VIEW_FULL);
  absl::StatusOr<v1::JobState> Cancel(const std::string& id);
  // Resubmits a FAILED/CANCELLED job as a new one; returns the new job's id.
  absl::StatusOr<std::string> Retry(const std::string& id);
  absl::StatusOr<std::vector<v1::Worker>> ListWorkers();
  // Runs lm-train predict on the job's checkpoint on the server (JobService.Predict). The
  // deadline is predict_timeout_ms, not rpc_timeout_ms: the server loads the model first.
  absl::StatusOr<v1::PredictResponse> Predict(const v1::PredictRequest& request,
                                              int predict_timeout_ms = 180000);
  // Streams events after after_seq to on_event until the job ends; reconnects (from the last
  // seq seen, so nothing is repeated or lost) if the stream breaks while the server is
  // reachable again within reconnect_ms.
  absl::Status Watch(const std::string& id, int64_t after_seq,
                     const std::function<void(const v1::JobEvent&)>& on_event,
                     int reconnect_ms = 30000);
  // Streams the job's events from the first; follow=false stops at the end of the replay
  // (the events stored when the server caught up), follow=true is Watch(id, 0, ...).
  absl::Status Events(const std::string& id, bool follow,
                      const std::function<void(const v1::JobEvent&)>& on_event,
                      int reconnect_ms = 30000);

 private:
  absl::Status Stream(const std::string& id, int64_t after_seq, bool replay_only,
                      const std::function<void(const v1::JobEvent&)>& on_event, int reconnect_ms);

  using Stub = v1::JobService::Stub;
  // Runs call(stub, ctx) (deadline deadline_ms), following replicas as the class says.
  absl::Status Unary(const std::string& what, int deadline_ms,
                     const std::function<grpc::Status(Stub&, grpc::ClientContext*)>& call);
  // The stub for the current replica, and its address ("" with a fixed channel).
  std::shared_ptr<Stub> CurrentStub(std::string* target);
  // After `status` from `target`: true when another replica should be tried now.
  bool FailOver(const std::string& target, const grpc::Status& status);

  std::optional<ClientChannelFactory> channels_;
  std::shared_ptr<Stub> stub_;  // Fixed channel, or the last replica's.
  std::string stub_target_;
  int rpc_timeout_ms_;
};

}  // namespace lmtrain
