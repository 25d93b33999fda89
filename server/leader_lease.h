// LeaderLease: keeps (or waits for) the store's lease that makes one lm-server replica the
// active one (JobStore::AcquireLease; PostgreSQL's implementation uses the database's clock).
//
//   standby --Step(): acquired--> [acquired(token) callback] --> active
//   active --Step(): renewed--> active (valid for ttl from the renewal's start)
//   active --renewals failed until ttl passed, or the lease went to another holder-->
//          [lost() callback] --> standby (the next Step() campaigns again; losses() counts)
//   any --Stop(): releases the lease if active--> stopped (terminal; Step() does nothing)
//
// held() is true only while the last successful renewal is younger than ttl on the local
// clock, measured from before that renewal was sent, so it turns false no later than the
// database's expiry (given clocks that run at the same rate): callers stop acting as the active
// server before another replica can take over. Fencing in the store backs this up.
//
// Thread-safe. Start() runs Step() every renew_period on its own thread; tests call Step()
// themselves with an injected Clock. Callbacks run on the thread calling Step(), without locks
// held; acquired() runs before held() turns true, and an error from it releases the lease and
// counts as a loss (lost() runs; the next Step() tries again).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/clock.h"
#include "storage/job_store.h"

namespace lmtrain {

class LeaderLease {
 public:
  struct Options {
    std::string name = "lm-server";  // The lease's name in the store.
    std::string holder;              // Unique per process and run. Required.
    std::string advertise_address;   // Where clients reach this server. Required.
    std::string http_url;            // Its HTTP front end's URL base; "" when it serves none.
    int64_t ttl_ms = 5000;           // The lease lapses this long after the last renewal.
    int64_t renew_period_ms = 1000;  // How often Start()'s thread calls Step(); < ttl_ms.
  };
  struct Callbacks {
    std::function<absl::Status(int64_t token)> acquired;  // Become active (fence, recover).
    std::function<void()> lost;  // Stop acting as the active server; standby again after it.
  };

  // `store` and `clock` are not owned and must outlive this.
  LeaderLease(JobStore* store, Clock* clock, Options options, Callbacks callbacks);
  ~LeaderLease();  // Stop().
  LeaderLease(const LeaderLease&) = delete;
  LeaderLease& operator=(const LeaderLease&) = delete;

  // One round: acquire or renew, then check the local validity.
  void Step();
  void Start();
  // Ends Start()'s thread and releases the lease if held. Idempotent.
  void Stop();

  bool held() const;
  // How many tenures ended in a loss (not counting Stop()).
  int losses() const;
  // The active server's advertised address and HTTP URL as last read from the store ("" if
  // none).
  std::string active_address() const;
  std::string active_http_url() const;
  int64_t token() const;

 private:
  enum class State { kStandby, kActive, kStopped };
  // The lease was acquired as a standby: acquired() callback, then active.
  void TakeOver(int64_t token);
  void Lose(absl::string_view why);

  JobStore* const store_;
  Clock* const clock_;
  const Options options_;
  const Callbacks callbacks_;
  mutable absl::Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kStandby;
  int64_t valid_until_ms_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t token_ ABSL_GUARDED_BY(mu_) = 0;
  int losses_ ABSL_GUARDED_BY(mu_) = 0;
  std::string active_address_ ABSL_GUARDED_BY(mu_);
  std::string active_http_url_ ABSL_GUARDED_BY(mu_);
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace lmtrain
