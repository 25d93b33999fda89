#include "bench/api_ops.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "proto/grpc_status.h"

namespace lmtrain::bench {
namespace fs = std::filesystem;

namespace {
using SteadyClock = std::chrono::steady_clock;
}  // namespace

JobFiles MakeJobFiles() {
  JobFiles f;
  f.dir = fs::temp_directory_path() / absl::StrCat("lm-bench-api-", ::getpid());
  fs::create_directories(f.dir);
  std::ofstream(f.dir / "train.txt") << "hello world\nthe quick brown fox\n";
  f.yaml =
      "name: bench\ntask: clm\nmodel:\n  config: {model_type: gpt2, n_layer: 1, n_head: 2, "
      "n_embd: 8, n_positions: 32}\ntokenizer:\n  train: {type: bpe, vocab_size: 50}\n"
      "data:\n  train_file: train.txt\n  block_size: 8\ntraining: {max_steps: 1}\n";
  return f;
}

std::unique_ptr<v1::JobService::Stub> NewStub(const std::string& server, int client) {
  grpc::ChannelArguments args;
  args.SetInt("lmtrain.bench.client", client);
  return v1::JobService::NewStub(
      grpc::CreateCustomChannel(server, grpc::InsecureChannelCredentials(), args));
}

namespace {

absl::StatusOr<std::string> Submit(v1::JobService::Stub& stub, const JobFiles& files,
                                   const std::string& request_id) {
  v1::SubmitJobRequest req;
  req.set_spec_yaml(files.yaml);
  req.set_source_name("bench.yaml");
  req.set_base_dir(files.dir.string());
  req.set_request_id(request_id);
  v1::SubmitJobResponse resp;
  grpc::ClientContext ctx;
  SetDeadlineMs(&ctx, kRpcTimeoutMs);
  grpc::Status s = stub.SubmitJob(&ctx, req, &resp);
  if (!s.ok()) return FromGrpcStatus(s, "submit");
  return resp.job_id();
}

class SubmitOp : public Operation {
 public:
  SubmitOp(const ApiBenchFlags& f, const JobFiles* files, int client)
      : stub_(NewStub(f.server, client)),
        files_(files),
        prefix_(absl::StrCat("bench-", ::getpid(), "-",
                             SteadyClock::now().time_since_epoch().count(), "-", client, "-")) {}
  absl::Status Call(double*) override {
    return Submit(*stub_, *files_, absl::StrCat(prefix_, next_++)).status();
  }

 private:
  std::unique_ptr<v1::JobService::Stub> stub_;
  const JobFiles* files_;
  std::string prefix_;
  int64_t next_ = 0;
};

class GetOp : public Operation {
 public:
  GetOp(const ApiBenchFlags& f, const std::vector<std::string>* ids, int client)
      : stub_(NewStub(f.server, client)), ids_(ids), next_(client) {}
  absl::Status Call(double*) override {
    v1::GetJobRequest req;
    req.set_job_id((*ids_)[next_++ % ids_->size()]);
    v1::Job job;
    grpc::ClientContext ctx;
    SetDeadlineMs(&ctx, kRpcTimeoutMs);
    return FromGrpcStatus(stub_->GetJob(&ctx, req, &job), "get");
  }

 private:
  std::unique_ptr<v1::JobService::Stub> stub_;
  const std::vector<std::string>* ids_;
  size_t next_;
};

// Each call is one page; a client follows next_page_token for f.list_pages pages, then starts
// over from the first page.
class ListOp : public Operation {
 public:
  ListOp(const ApiBenchFlags& f, int client) : stub_(NewStub(f.server, client)), pages_(f.list_pages) {
    req_.set_page_size(static_cast<int>(f.list_limit));
    req_.set_view(f.list_view == "basic" ? v1::JOB_VIEW_BASIC : v1::JOB_VIEW_FULL);
    for (absl::string_view name : absl::StrSplit(f.list_states, ',', absl::SkipEmpty())) {
      v1::JobState state = v1::JOB_STATE_UNSPECIFIED;
      if (v1::JobState_Parse(std::string(name), &state)) req_.add_states(state);
    }
  }
  absl::Status Call(double*) override {
    if (page_++ % pages_ == 0) req_.clear_page_token();
    v1::ListJobsResponse resp;
    grpc::ClientContext ctx;
    SetDeadlineMs(&ctx, kRpcTimeoutMs);
    grpc::Status s = stub_->ListJobs(&ctx, req_, &resp);
    req_.set_page_token(resp.next_page_token());
    if (resp.next_page_token().empty()) page_ = 0;  // The last page: start over.
    return FromGrpcStatus(s, "list");
  }

 private:
  std::unique_ptr<v1::JobService::Stub> stub_;
  int64_t pages_;
  int64_t page_ = 0;
  v1::ListJobsRequest req_;
};

// Reads a WatchJob stream from after_seq=0. Stops at the end of the stream, or, when
// stop_at_running, after the RUNNING event (then *running_at is set).
absl::Status Watch(v1::JobService::Stub& stub, const std::string& id, bool stop_at_running,
                   SteadyClock::time_point* running_at) {
  grpc::ClientContext ctx;
  SetDeadlineMs(&ctx, kRpcTimeoutMs);
  v1::WatchJobRequest req;
  req.set_job_id(id);
  auto reader = stub.WatchJob(&ctx, req);
  v1::JobEvent event;
  while (reader->Read(&event)) {
    if (event.has_state_changed() && event.state_changed().state() == v1::RUNNING &&
        stop_at_running) {
      *running_at = SteadyClock::now();
      ctx.TryCancel();
      reader->Finish();
      return absl::OkStatus();
    }
  }
  grpc::Status s = reader->Finish();
  if (!s.ok()) return FromGrpcStatus(s, "watch");
  if (stop_at_running) return absl::InternalError(absl::StrCat("job ", id, " ended unstarted"));
  return absl::OkStatus();
}

class WatchOp : public Operation {
 public:
  WatchOp(const ApiBenchFlags& f, const std::vector<std::string>* ids, int client)
      : stub_(NewStub(f.server, client)), ids_(ids), next_(client) {}
  absl::Status Call(double*) override {
    return Watch(*stub_, (*ids_)[next_++ % ids_->size()], false, nullptr);
  }

 private:
  std::unique_ptr<v1::JobService::Stub> stub_;
  const std::vector<std::string>* ids_;
  size_t next_;
};

// Records submit -> RUNNING event; then cancels the job and waits for it to end (untimed, but
// inside the call, so the next call finds the worker idle).
class SubmitToRunningOp : public Operation {
 public:
  SubmitToRunningOp(const ApiBenchFlags& f, const JobFiles* files, int client)
      : stub_(NewStub(f.server, client)), files_(files), client_(client) {}
  absl::Status Call(double* latency_ms) override {
    const SteadyClock::time_point start = SteadyClock::now();
    auto id = Submit(*stub_, *files_,
                     absl::StrCat("bench-s2r-", ::getpid(), "-", client_, "-", next_++, "-",
                                  start.time_since_epoch().count()));
    if (!id.ok()) return id.status();
    SteadyClock::time_point running_at;
    absl::Status s = Watch(*stub_, *id, true, &running_at);
    if (!s.ok()) return s;
    *latency_ms = std::chrono::duration<double, std::milli>(running_at - start).count();
    v1::CancelJobRequest req;
    req.set_job_id(*id);
    req.set_reason("lm-bench-api: measured");
    v1::CancelJobResponse resp;
    grpc::ClientContext ctx;
    SetDeadlineMs(&ctx, kRpcTimeoutMs);
    grpc::Status cancelled = stub_->CancelJob(&ctx, req, &resp);
    // FAILED_PRECONDITION: it had ended already.
    if (!cancelled.ok() && cancelled.error_code() != grpc::StatusCode::FAILED_PRECONDITION) {
      return FromGrpcStatus(cancelled, "cancel");
    }
    return Watch(*stub_, *id, false, nullptr);
  }

 private:
  std::unique_ptr<v1::JobService::Stub> stub_;
  const JobFiles* files_;
  int client_;
  int64_t next_ = 0;
};

// Submits n jobs and cancels each (a queued job is cancelled at once): finished jobs with a
// short event log, for get/list/watch.
absl::StatusOr<std::vector<std::string>> SeedJobs(const ApiBenchFlags& f, const JobFiles& files) {
  auto stub = NewStub(f.server, -1);
  std::vector<std::string> ids;
  for (int64_t i = 0; i < f.seed_jobs; ++i) {
    auto id = Submit(*stub, files, "");
    if (!id.ok()) return id.status();
    v1::CancelJobRequest req;
    req.set_job_id(*id);
    req.set_reason("lm-bench-api seed");
    v1::CancelJobResponse resp;
    grpc::ClientContext ctx;
    SetDeadlineMs(&ctx, kRpcTimeoutMs);
    grpc::Status s = stub->CancelJob(&ctx, req, &resp);
    if (!s.ok()) return FromGrpcStatus(s, "seed cancel");
    ids.push_back(*id);
  }
  return ids;
}

}  // namespace

absl::StatusOr<OperationFactory> MakeFactory(const ApiBenchFlags& f, const JobFiles* files,
                                             std::vector<std::string>* ids) {
  if (f.op == "submit") {
    return OperationFactory([&f, files](int c) { return std::make_unique<SubmitOp>(f, files, c); });
  }
  if (f.op == "submit-to-running") {
    return OperationFactory(
        [&f, files](int c) { return std::make_unique<SubmitToRunningOp>(f, files, c); });
  }
  if (f.op == "list") {
    return OperationFactory([&f](int c) { return std::make_unique<ListOp>(f, c); });
  }
  if (f.op != "get" && f.op != "watch") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--op must be submit, get, list, watch or submit-to-running (got '", f.op, "')"));
  }
  if (f.seed_jobs < 1) return absl::InvalidArgumentError("--seed-jobs must be >= 1 for get/watch");
  auto seeded = SeedJobs(f, *files);
  if (!seeded.ok()) return seeded.status();
  *ids = *std::move(seeded);
  if (f.op == "get") {
    return OperationFactory([&f, ids](int c) { return std::make_unique<GetOp>(f, ids, c); });
  }
  return OperationFactory([&f, ids](int c) { return std::make_unique<WatchOp>(f, ids, c); });
}

}  // namespace lmtrain::bench
