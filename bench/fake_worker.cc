#include "bench/fake_worker.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "proto/grpc_status.h"

namespace lmtrain::bench {
namespace {

constexpr int kWaitMs = 1000;  // lm-worker's default long-poll.

void SetDeadline(grpc::ClientContext* ctx, int ms) {
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(ms));
}

bool Same(const v1::RunningRank& a, const v1::RunningRank& b) {
  return a.job_id() == b.job_id() && a.rank() == b.rank() && a.attempt() == b.attempt();
}

}  // namespace

FakeWorker::FakeWorker(const std::string& server, int slots)
    : stub_(v1::WorkerService::NewStub(
          grpc::CreateChannel(server, grpc::InsecureChannelCredentials()))),
      slots_(slots) {}

FakeWorker::~FakeWorker() { Stop(); }

absl::Status FakeWorker::Start() {
  if (absl::Status s = Register(); !s.ok()) return s;
  thread_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

void FakeWorker::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

absl::Status FakeWorker::Register() {
  v1::RegisterWorkerRequest req;
  req.set_name("lm-bench-api-fake-worker");
  req.set_hostname("127.0.0.1");
  req.set_slots(slots_);
  for (const v1::RunningRank& r : running_) *req.add_running() = r;
  v1::RegisterWorkerResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(&ctx, 10000);
  grpc::Status s = stub_->RegisterWorker(&ctx, req, &resp);
  if (!s.ok()) return FromGrpcStatus(s, "register");
  worker_id_ = resp.worker_id();
  return absl::OkStatus();
}

void FakeWorker::Loop() {
  while (!stop_) {
    // An error (the server stopping) ends nothing but this poll: try again until Stop().
    if (!SyncOnce().ok() && !stop_) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

absl::Status FakeWorker::SyncOnce() {
  v1::SyncRequest req;
  req.set_worker_id(worker_id_);
  req.set_wait_ms(kWaitMs);
  for (const v1::RunningRank& r : running_) *req.add_running() = r;
  v1::SyncResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(&ctx, kWaitMs + 5000);
  grpc::Status s = stub_->Sync(&ctx, req, &resp);
  if (!s.ok()) return FromGrpcStatus(s, "sync");
  if (resp.reregister()) return Register();
  for (const v1::Assignment& a : resp.assignments()) {
    v1::RunningRank rank;
    rank.set_job_id(a.job_id());
    rank.set_rank(a.rank());
    rank.set_attempt(a.attempt());
    if (std::none_of(running_.begin(), running_.end(),
                     [&](const v1::RunningRank& r) { return Same(r, rank); })) {
      running_.push_back(rank);
    }
    v1::WorkerJobEvent started;
    started.mutable_started()->set_pid(::getpid());
    if (absl::Status r = Report(a.job_id(), a.rank(), a.attempt(), started); !r.ok()) return r;
  }
  for (const v1::RunningRank& stop : resp.stop()) {
    running_.erase(std::remove_if(running_.begin(), running_.end(),
                                  [&](const v1::RunningRank& r) { return Same(r, stop); }),
                   running_.end());
    v1::WorkerJobEvent exited;
    exited.mutable_exited()->set_exit_code(-1);
    exited.mutable_exited()->set_signal(15);
    exited.mutable_exited()->set_cancelled(true);
    // FAILED_PRECONDITION (not current any more) is an answer too: the rank is gone either way.
    Report(stop.job_id(), stop.rank(), stop.attempt(), exited).IgnoreError();
  }
  return absl::OkStatus();
}

absl::Status FakeWorker::Report(const std::string& job_id, int rank, int attempt,
                                const v1::WorkerJobEvent& event) {
  v1::ReportJobEventsRequest req;
  req.set_worker_id(worker_id_);
  req.set_job_id(job_id);
  req.set_rank(rank);
  req.set_attempt(attempt);
  *req.add_events() = event;
  v1::ReportJobEventsResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(&ctx, 10000);
  grpc::Status s = stub_->ReportJobEvents(&ctx, req, &resp);
  return s.ok() ? absl::OkStatus() : FromGrpcStatus(s, "report");
}

}  // namespace lmtrain::bench
