#include "bench/watch_fanout_bench.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "bench/api_load.h"
#include "lmtrain/v1/jobs.grpc.pb.h"
#include "lmtrain/v1/worker.grpc.pb.h"
#include "proto/grpc_status.h"
#include "proto/watch_job_reactor.h"

namespace lmtrain::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

int64_t NowNs() { return SteadyClock::now().time_since_epoch().count(); }

// What every stream reports, and the send stamp of each event (index = metric step).
class Tally {
 public:
  explicit Tally(int events) : sent_ns_(events + 1) {}
  void Stamp(int step) { sent_ns_[step].store(NowNs(), std::memory_order_release); }
  int64_t SentNs(int step) const {
    if (step < 1 || step >= static_cast<int>(sent_ns_.size())) return 0;
    return sent_ns_[step].load(std::memory_order_acquire);
  }
  void Live() {
    absl::MutexLock lock(&mu_);
    ++live_;
  }
  void Delivered(double delay_ms) {
    absl::MutexLock lock(&mu_);
    delays_ms_.push_back(delay_ms);
  }
  void Finished(bool complete) {
    absl::MutexLock lock(&mu_);
    ++finished_;
    complete_ += complete ? 1 : 0;
  }
  // Wait until n streams are live / finished; false on timeout.
  bool AwaitLive(int n, absl::Duration timeout) { return Await(&live_, n, timeout); }
  bool AwaitFinished(int n, absl::Duration timeout) { return Await(&finished_, n, timeout); }
  bool AwaitDeliveries(int n, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return static_cast<int>(delays_ms_.size()) >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
  }
  std::vector<double> delays_ms() const {
    absl::MutexLock lock(&mu_);
    return delays_ms_;
  }
  int complete() const {
    absl::MutexLock lock(&mu_);
    return complete_;
  }

 private:
  bool Await(int* counter, int n, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return *counter >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
  }

  std::vector<std::atomic<int64_t>> sent_ns_;
  mutable absl::Mutex mu_;
  int live_ ABSL_GUARDED_BY(mu_) = 0;
  int finished_ ABSL_GUARDED_BY(mu_) = 0;
  int complete_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<double> delays_ms_ ABSL_GUARDED_BY(mu_);
};

// One WatchJob stream on the callback client API: live at the RUNNING event, then times each
// metric event against its stamp and checks the steps come 1, 2, 3, ... exactly once.
class WatchStream final : public WatchJobReactor {
 public:
  WatchStream(v1::JobService::Stub* stub, const std::string& job_id, int events, Tally* tally)
      : events_(events), tally_(tally) {
    v1::WatchJobRequest request;
    request.set_job_id(job_id);
    Start(stub, request);
  }

 private:
  void OnEvent(const v1::JobEvent& event) override {
    const int64_t now = NowNs();
    if (event.has_state_changed() && event.state_changed().state() == v1::RUNNING) {
      tally_->Live();
    } else if (event.has_metrics()) {
      const int64_t step = event.metrics().step();
      in_order_ = in_order_ && step == next_step_;
      next_step_ = step + 1;
      const int64_t sent = tally_->SentNs(static_cast<int>(step));
      tally_->Delivered(sent > 0 ? (now - sent) / 1e6 : -1);
    }
  }
  void OnEnd(const grpc::Status&) override {
    tally_->Finished(in_order_ && next_step_ == events_ + 1);
  }

  const int events_;
  Tally* const tally_;
  int64_t next_step_ = 1;
  bool in_order_ = true;
};

std::shared_ptr<grpc::Channel> NewChannel(const std::string& server, int index) {
  grpc::ChannelArguments args;
  args.SetInt("lmtrain.bench.watch_channel", index);  // Distinct args: its own connection.
  return grpc::CreateCustomChannel(server, grpc::InsecureChannelCredentials(), args);
}

void SetDeadline(grpc::ClientContext* ctx) {
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(kRpcTimeoutMs));
}

// Submits the job and returns it once RUNNING (read from its WatchJob stream).
absl::StatusOr<v1::Job> SubmitRunning(v1::JobService::Stub& stub, const WatchFanoutOptions& o) {
  v1::SubmitJobRequest submit;
  submit.set_spec_yaml(o.job_yaml);
  submit.set_source_name("bench.yaml");
  submit.set_base_dir(o.job_base_dir);
  v1::SubmitJobResponse submitted;
  grpc::ClientContext submit_ctx;
  SetDeadline(&submit_ctx);
  grpc::Status s = stub.SubmitJob(&submit_ctx, submit, &submitted);
  if (!s.ok()) return FromGrpcStatus(s, "submit");
  grpc::ClientContext watch_ctx;
  SetDeadline(&watch_ctx);
  v1::WatchJobRequest watch;
  watch.set_job_id(submitted.job_id());
  auto reader = stub.WatchJob(&watch_ctx, watch);
  v1::JobEvent event;
  bool running = false;
  while (!running && reader->Read(&event)) {
    running = event.has_state_changed() && event.state_changed().state() == v1::RUNNING;
  }
  watch_ctx.TryCancel();
  reader->Finish();
  if (!running) return absl::UnavailableError("the job never ran: is a worker attached?");
  v1::GetJobRequest get;
  get.set_job_id(submitted.job_id());
  v1::Job job;
  grpc::ClientContext get_ctx;
  SetDeadline(&get_ctx);
  s = stub.GetJob(&get_ctx, get, &job);
  if (!s.ok()) return FromGrpcStatus(s, "get");
  if (job.attempts().empty()) return absl::InternalError("a running job without an attempt");
  return job;
}

// Reports metric `step` for the job's rank 0, as its worker would.
absl::Status ReportMetric(v1::WorkerService::Stub& stub, const v1::Job& job, int step) {
  v1::ReportJobEventsRequest req;
  req.set_worker_id(job.worker_id());
  req.set_job_id(job.id());
  req.set_rank(0);
  req.set_attempt(job.attempts().rbegin()->number());
  v1::Metrics* m = req.add_events()->mutable_metrics();
  m->set_step(step);
  m->set_loss(1.0 / step);
  v1::ReportJobEventsResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  return FromGrpcStatus(stub.ReportJobEvents(&ctx, req, &resp), "report");
}

absl::Status CancelJob(v1::JobService::Stub& stub, const std::string& id) {
  v1::CancelJobRequest req;
  req.set_job_id(id);
  req.set_reason("lm-bench-api: measured");
  v1::CancelJobResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  return FromGrpcStatus(stub.CancelJob(&ctx, req, &resp), "cancel");
}

nlohmann::json Summary(const WatchFanoutOptions& o, const Tally& tally, double live_s) {
  LoadResult delays;
  delays.latency_ms = tally.delays_ms();
  std::sort(delays.latency_ms.begin(), delays.latency_ms.end());
  nlohmann::json line = {{"op", "watch-fanout"},
                         {"watchers", o.watchers},
                         {"events", o.events},
                         {"interval_ms", o.interval_ms},
                         {"channels", o.channels},
                         {"deliveries", delays.latency_ms.size()},
                         {"expected", int64_t{o.watchers} * o.events},
                         {"complete_watchers", tally.complete()},
                         {"live_s", live_s}};
  for (auto [name, q] : {std::pair{"p50_ms", 0.5}, {"p90_ms", 0.9}, {"p99_ms", 0.99}}) {
    line[name] = delays.PercentileMs(q);
  }
  line["max_ms"] = delays.latency_ms.empty() ? 0 : delays.latency_ms.back();
  return line;
}

// Cancels every stream and waits for gRPC to be done with each.
void EndStreams(std::vector<std::unique_ptr<WatchStream>>& streams, Tally& tally) {
  for (auto& stream : streams) stream->Cancel();
  if (!tally.AwaitFinished(static_cast<int>(streams.size()), absl::Seconds(60))) {
    std::cerr << "lm-bench-api: watch streams did not end after a cancel\n";
    std::abort();  // Freeing them now would pull them from under gRPC.
  }
}

// Delivers the events to the live streams, then ends them; the summary, or an error.
nlohmann::json Measure(const WatchFanoutOptions& o, const v1::Job& job,
                       std::vector<std::unique_ptr<WatchStream>>& streams, Tally& tally,
                       double live_s) {
  auto worker = v1::WorkerService::NewStub(NewChannel(o.server, -1));
  absl::Status reported;
  for (int step = 1; step <= o.events && reported.ok(); ++step) {
    if (step > 1) std::this_thread::sleep_for(std::chrono::milliseconds(o.interval_ms));
    tally.Stamp(step);
    reported = ReportMetric(*worker, job, step);
  }
  tally.AwaitDeliveries(o.watchers * o.events, absl::Seconds(30));
  EndStreams(streams, tally);
  if (!reported.ok()) return {{"op", "watch-fanout"}, {"error", reported.ToString()}};
  return Summary(o, tally, live_s);
}

}  // namespace

nlohmann::json RunWatchFanout(const WatchFanoutOptions& o) {
  std::vector<std::unique_ptr<v1::JobService::Stub>> stubs;
  for (int i = 0; i < std::max(1, o.channels); ++i) {
    stubs.push_back(v1::JobService::NewStub(NewChannel(o.server, i)));
  }
  auto job = SubmitRunning(*stubs[0], o);
  if (!job.ok()) return {{"op", "watch-fanout"}, {"error", job.status().ToString()}};
  Tally tally(o.events);
  const SteadyClock::time_point start = SteadyClock::now();
  std::vector<std::unique_ptr<WatchStream>> streams;
  for (int i = 0; i < o.watchers; ++i) {
    streams.push_back(
        std::make_unique<WatchStream>(stubs[i % stubs.size()].get(), job->id(), o.events, &tally));
  }
  nlohmann::json line;
  if (!tally.AwaitLive(o.watchers, absl::Seconds(120))) {
    EndStreams(streams, tally);
    line = {{"op", "watch-fanout"}, {"error", "not every watcher went live within 120 s"}};
  } else {
    const double live_s = std::chrono::duration<double>(SteadyClock::now() - start).count();
    line = Measure(o, *job, streams, tally, live_s);
  }
  CancelJob(*stubs[0], job->id()).IgnoreError();
  return line;
}

}  // namespace lmtrain::bench
