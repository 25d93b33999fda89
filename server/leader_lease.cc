#include "server/leader_lease.h"

#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"

namespace lmtrain {

LeaderLease::LeaderLease(JobStore* store, Clock* clock, Options options, Callbacks callbacks)
    : store_(store), clock_(clock), options_(std::move(options)), callbacks_(std::move(callbacks)) {}

LeaderLease::~LeaderLease() { Stop(); }

void LeaderLease::Step() {
  State state;
  {
    absl::MutexLock lock(&mu_);
    state = state_;
  }
  if (state == State::kStopped) return;
  const int64_t sent_ms = clock_->NowMs();
  absl::StatusOr<LeaseState> lease =
      store_->AcquireLease({options_.name, options_.holder, options_.advertise_address,
                            options_.ttl_ms, options_.http_url});
  if (lease.ok()) {
    {
      absl::MutexLock lock(&mu_);
      active_address_ = lease->holder.empty() ? "" : lease->holder_address;
      active_http_url_ = lease->holder.empty() ? "" : lease->holder_http_url;
      if (lease->held) valid_until_ms_ = sent_ms + options_.ttl_ms;
    }
    if (lease->held && state == State::kStandby) return TakeOver(lease->token);
    if (!lease->held && state == State::kActive) {
      return Lose(absl::StrCat("the lease went to ", lease->holder_address));
    }
  } else if (state == State::kActive) {
    std::cerr << "lm-server: renewing the lease failed: " << lease.status() << std::endl;
  }
  if (state == State::kActive && !held()) Lose("renewals failed for longer than the lease TTL");
}

void LeaderLease::TakeOver(int64_t token) {
  if (absl::Status ok = callbacks_.acquired(token); !ok.ok()) {
    // Let another replica try at once rather than hold a lease this one cannot serve.
    store_->ReleaseLease(options_.name, options_.holder).IgnoreError();
    return Lose(absl::StrCat("taking over failed: ", ok.ToString()));
  }
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kStandby) {
      state_ = State::kActive;
      token_ = token;
      return;
    }
  }
  // Stop() ran meanwhile and released nothing (it saw a standby): hand the lease over now.
  store_->ReleaseLease(options_.name, options_.holder).IgnoreError();
}

// The lost() callback runs before the state turns standby, so the next Step() campaigns only
// once the caller has stopped acting as the active server.
void LeaderLease::Lose(absl::string_view why) {
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kStopped) return;
    valid_until_ms_ = 0;
    ++losses_;
  }
  std::cerr << "lm-server: lost the lease '" << options_.name << "': " << why << std::endl;
  if (callbacks_.lost) callbacks_.lost();
  absl::MutexLock lock(&mu_);
  if (state_ != State::kStopped) state_ = State::kStandby;
}

void LeaderLease::Start() {
  thread_ = std::thread([this] {
    do {
      Step();
    } while (!stop_.WaitForNotificationWithTimeout(absl::Milliseconds(options_.renew_period_ms)));
  });
}

void LeaderLease::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
  bool release;
  {
    absl::MutexLock lock(&mu_);
    release = state_ == State::kActive;
    state_ = State::kStopped;
  }
  if (release) store_->ReleaseLease(options_.name, options_.holder).IgnoreError();
}

bool LeaderLease::held() const {
  absl::MutexLock lock(&mu_);
  return state_ == State::kActive && clock_->NowMs() < valid_until_ms_;
}

int LeaderLease::losses() const {
  absl::MutexLock lock(&mu_);
  return losses_;
}

std::string LeaderLease::active_address() const {
  absl::MutexLock lock(&mu_);
  return active_address_;
}

std::string LeaderLease::active_http_url() const {
  absl::MutexLock lock(&mu_);
  return active_http_url_;
}

int64_t LeaderLease::token() const {
  absl::MutexLock lock(&mu_);
  return token_;
}

}  // namespace lmtrain
