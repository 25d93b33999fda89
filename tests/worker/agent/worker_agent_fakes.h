// Hand-written fakes for WorkerAgent's seams: a scripted lm-server (ServerClient) and a process
// launcher whose children are pipes the test writes to and "exits" at will. Both record what
// the agent did and let a test wait on it (no sleeps: every wait is on a condition, with a
// deadline).
#pragma once

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/process_launcher.h"
#include "worker/agent/gpu_inventory.h"
#include "worker/agent/server_client.h"

namespace lmtrain::testing {

constexpr absl::Duration kWaitLimit = absl::Seconds(20);

// lm-server as a script: Register answers from `register_results` (then "w1", "w2", ... by
// call count), Sync from `orders` (an empty queue long-polls for up to wait_ms, like the
// server, then answers "nothing to do"), Report with `report_result`. Thread-safe.
class FakeServerClient final : public ServerClient {
 public:
  absl::StatusOr<std::string> Register(const WorkerRegistration& registration) override {
    absl::MutexLock lock(&mu_);
    registrations_.push_back(registration);
    if (!register_results_.empty()) {
      absl::StatusOr<std::string> r = register_results_.front();
      register_results_.pop_front();
      return r;
    }
    return absl::StrCat("w", ++ids_given_);
  }

  absl::StatusOr<SyncOrders> Sync(const WorkerSync& sync) override {
    absl::MutexLock lock(&mu_);
    syncs_.push_back(sync);
    auto has_orders = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !orders_.empty(); };
    mu_.AwaitWithTimeout(absl::Condition(&has_orders), absl::Milliseconds(sync.wait_ms));
    if (orders_.empty()) return SyncOrders();
    absl::StatusOr<SyncOrders> next = orders_.front();
    orders_.pop_front();
    ++orders_served_;
    served_at_.push_back(syncs_.size());
    return next;
  }

  absl::StatusOr<ReportReply> Report(const RankEventBatch& batch) override {
    absl::MutexLock lock(&mu_);
    reports_.push_back(batch);
    return report_result_;
  }

  // Queues the answer to a coming Sync; returns how many answers were queued before it, so that
  // WaitServed(n + 1) waits until the agent has taken this one.
  int Push(absl::StatusOr<SyncOrders> orders) {
    absl::MutexLock lock(&mu_);
    orders_.push_back(std::move(orders));
    return orders_served_ + static_cast<int>(orders_.size()) - 1;
  }
  void PushRegisterResult(absl::StatusOr<std::string> result) {
    absl::MutexLock lock(&mu_);
    register_results_.push_back(std::move(result));
  }
  void SetReportResult(absl::StatusOr<ReportReply> result) {
    absl::MutexLock lock(&mu_);
    report_result_ = std::move(result);
  }

  // Waits until `pred` (called under the lock) holds; false after kWaitLimit.
  bool Await(const std::function<bool(const FakeServerClient&)>& pred) {
    absl::MutexLock lock(&mu_);
    auto cond = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return pred(*this); };
    return mu_.AwaitWithTimeout(absl::Condition(&cond), kWaitLimit);
  }
  // Until `count` queued answers were taken and the agent has synced again after the last
  // (so it has applied them).
  bool WaitServed(int count) {
    return Await([count](const FakeServerClient& s) {
      return s.orders_served_ >= count && s.syncs_.size() > s.syncs_at_serve(count);
    });
  }

  std::vector<WorkerRegistration> registrations() const {
    absl::MutexLock lock(&mu_);
    return registrations_;
  }
  std::vector<WorkerSync> syncs() const {
    absl::MutexLock lock(&mu_);
    return syncs_;
  }
  std::vector<RankEventBatch> reports() const {
    absl::MutexLock lock(&mu_);
    return reports_;
  }

  // For Await predicates (the lock is held).
  const std::vector<WorkerRegistration>& registrations_locked() const { return registrations_; }
  const std::vector<WorkerSync>& syncs_locked() const { return syncs_; }
  const std::vector<RankEventBatch>& reports_locked() const { return reports_; }

 private:
  // The number of syncs made when the `count`-th answer was taken (the answer's own sync).
  size_t syncs_at_serve(int count) const {
    return count <= static_cast<int>(served_at_.size()) ? served_at_[count - 1] : SIZE_MAX;
  }

  mutable absl::Mutex mu_;
  std::deque<absl::StatusOr<std::string>> register_results_ ABSL_GUARDED_BY(mu_);
  int ids_given_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<absl::StatusOr<SyncOrders>> orders_ ABSL_GUARDED_BY(mu_);
  int orders_served_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<size_t> served_at_ ABSL_GUARDED_BY(mu_);
  absl::StatusOr<ReportReply> report_result_ ABSL_GUARDED_BY(mu_) = ReportReply();
  std::vector<WorkerRegistration> registrations_ ABSL_GUARDED_BY(mu_);
  std::vector<WorkerSync> syncs_ ABSL_GUARDED_BY(mu_);
  std::vector<RankEventBatch> reports_ ABSL_GUARDED_BY(mu_);
};

// One fake lm-train: its stdout, stderr and events are pipes the test writes into. It "dies"
// (closes the pipes, Wait() returns) on Exit(), on SIGKILL, and on SIGTERM unless it ignores it.
class FakeChildState {
 public:
  explicit FakeChildState(bool ignores_sigterm) : ignores_sigterm_(ignores_sigterm) {
    for (int* p : {out_, err_, events_}) {
      if (pipe(p) != 0) p[0] = p[1] = -1;
    }
  }
  ~FakeChildState() {
    CloseWriteEnds();
    for (int fd : {out_[0], err_[0], events_[0]}) {
      if (fd >= 0) close(fd);
    }
  }

  void WriteEvent(const std::string& line) { Write(events_[1], line + "\n"); }
  void WriteStdout(const std::string& line) { Write(out_[1], line + "\n"); }
  void Exit(int code) { Die({code, 0}); }

  void Signal(int sig) {
    {
      absl::MutexLock lock(&mu_);
      signals_.push_back(sig);
    }
    if (sig == SIGKILL || (sig == SIGTERM && !ignores_sigterm_)) Die({-1, sig});
  }
  ExitStatus Wait() {
    exited_.WaitForNotification();
    absl::MutexLock lock(&mu_);
    return status_;
  }
  std::vector<int> signals() const {
    absl::MutexLock lock(&mu_);
    return signals_;
  }
  bool WaitForSignal(int sig) const {
    absl::MutexLock lock(&mu_);
    auto got = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return std::find(signals_.begin(), signals_.end(), sig) != signals_.end();
    };
    return mu_.AwaitWithTimeout(absl::Condition(&got), kWaitLimit);
  }

  int stdout_fd() const { return out_[0]; }
  int stderr_fd() const { return err_[0]; }
  int events_fd() const { return events_[0]; }

 private:
  static void Write(int fd, const std::string& text) {
    if (fd >= 0 && write(fd, text.data(), text.size()) < 0) {
      // The reader is gone: the runner stopped listening; nothing to deliver.
    }
  }
  void Die(ExitStatus status) {
    absl::MutexLock lock(&mu_);
    if (exited_.HasBeenNotified()) return;
    status_ = status;
    CloseWriteEnds();
    exited_.Notify();
  }
  void CloseWriteEnds() {
    for (int* p : {out_, err_, events_}) {
      if (p[1] >= 0) close(p[1]);
      p[1] = -1;
    }
  }

  const bool ignores_sigterm_;
  int out_[2], err_[2], events_[2];
  mutable absl::Mutex mu_;
  std::vector<int> signals_ ABSL_GUARDED_BY(mu_);
  ExitStatus status_ ABSL_GUARDED_BY(mu_);
  absl::Notification exited_;
};

class FakeChild final : public ChildProcess {
 public:
  FakeChild(std::shared_ptr<FakeChildState> state, int pid) : state_(std::move(state)), pid_(pid) {}
  int pid() const override { return pid_; }
  int stdout_fd() const override { return state_->stdout_fd(); }
  int stderr_fd() const override { return state_->stderr_fd(); }
  int events_fd() const override { return state_->events_fd(); }
  void Signal(int sig) override { state_->Signal(sig); }
  ExitStatus Wait() override { return state_->Wait(); }

 private:
  std::shared_ptr<FakeChildState> state_;
  const int pid_;
};

// Records each LaunchSpec and hands out FakeChilds (pids 1000, 1001, ...). Thread-safe.
class FakeProcessLauncher final : public ProcessLauncher {
 public:
  absl::StatusOr<std::unique_ptr<ChildProcess>> Launch(const LaunchSpec& spec) override {
    absl::MutexLock lock(&mu_);
    specs_.push_back(spec);
    children_.push_back(std::make_shared<FakeChildState>(ignore_sigterm_));
    return std::make_unique<FakeChild>(children_.back(),
                                       1000 + static_cast<int>(children_.size()) - 1);
  }
  void set_ignore_sigterm(bool ignore) {
    absl::MutexLock lock(&mu_);
    ignore_sigterm_ = ignore;
  }
  // Waits for the `n`-th launch (1-based) and returns its child; null after kWaitLimit.
  std::shared_ptr<FakeChildState> WaitForChild(size_t n) {
    absl::MutexLock lock(&mu_);
    auto launched = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return children_.size() >= n; };
    if (!mu_.AwaitWithTimeout(absl::Condition(&launched), kWaitLimit)) return nullptr;
    return children_[n - 1];
  }
  std::vector<LaunchSpec> specs() const {
    absl::MutexLock lock(&mu_);
    return specs_;
  }

 private:
  mutable absl::Mutex mu_;
  bool ignore_sigterm_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<LaunchSpec> specs_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<FakeChildState>> children_ ABSL_GUARDED_BY(mu_);
};

// A fixed list of GPUs.
class FixedGpuInventory final : public GpuInventory {
 public:
  explicit FixedGpuInventory(std::vector<GpuDevice> gpus) : gpus_(std::move(gpus)) {}
  absl::StatusOr<std::vector<GpuDevice>> List() override { return gpus_; }

 private:
  const std::vector<GpuDevice> gpus_;
};

}  // namespace lmtrain::testing
