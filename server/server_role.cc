#include "server/server_role.h"

#include <unistd.h>

#include <iostream>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "proto/server_targets.h"

namespace lmtrain {
namespace {

// Served by a standby: reads answered from the shared store.
bool StandbyServes(absl::string_view method) {
  if (absl::StartsWith(method, "/lmtrain.v1.WorkerService/")) return false;
  if (!absl::StartsWith(method, "/lmtrain.v1.JobService/")) return true;
  return method == "/lmtrain.v1.JobService/GetJob" || method == "/lmtrain.v1.JobService/ListJobs";
}

std::string RandomHolder() {
  std::random_device random;
  return absl::StrFormat("lm-server-%08x%08x", random(), random());
}

}  // namespace

std::string ServerRole::DefaultAdvertiseAddress(const std::string& listen, int port) {
  std::string host = listen.substr(0, listen.rfind(':'));
  if (host.empty() || host == "0.0.0.0" || host == "[::]" || host == "::") {
    char name[256] = {};
    host = gethostname(name, sizeof(name) - 1) == 0 ? name : "localhost";
  }
  return absl::StrCat(host, ":", port);
}

ServerRole::ServerRole(JobStore* store, Clock* clock, Dispatcher* dispatcher, Options options,
                       std::function<void()> on_lost)
    : store_(store),
      clock_(clock),
      dispatcher_(dispatcher),
      options_(std::move(options)),
      on_lost_(std::move(on_lost)) {
  if (options_.replicated) {
    store_->FenceWrites(options_.lease.name, 0);
    if (dispatcher_ != nullptr) dispatcher_->SetDispatching(false);  // Until it holds the lease.
  }
}

ServerRole::~ServerRole() { Stop(); }

void ServerRole::Start(const std::string& advertise_address, const std::string& http_url) {
  if (!options_.replicated) return;
  LeaderLease::Options lease = options_.lease;
  if (lease.holder.empty()) lease.holder = RandomHolder();
  lease.advertise_address = advertise_address;
  lease.http_url = http_url;
  LeaderLease::Callbacks callbacks;
  callbacks.acquired = [this](int64_t token) { return TakeOver(token); };
  callbacks.lost = [this] { StepDown(); };
  auto leader = std::make_shared<LeaderLease>(store_, clock_, std::move(lease), std::move(callbacks));
  {
    absl::MutexLock lock(&mu_);
    advertise_address_ = advertise_address;
    http_url_ = http_url;
  }
  leader->Step();
  {
    absl::MutexLock lock(&mu_);
    lease_ = leader;
  }
  leader->Start();
}

void ServerRole::Stop() {
  std::shared_ptr<LeaderLease> lease;
  {
    absl::MutexLock lock(&mu_);
    lease = lease_;
  }
  if (lease != nullptr) lease->Stop();
}

absl::Status ServerRole::TakeOver(int64_t token) {
  store_->FenceWrites(options_.lease.name, token);
  std::cerr << "lm-server: active (lease '" << options_.lease.name << "', token " << token
            << "); recovering jobs from the store" << std::endl;
  RETURN_IF_ERROR(dispatcher_->Recover());
  dispatcher_->SetDispatching(true);
  std::cerr << "lm-server: jobs recovered; dispatching as the active server" << std::endl;
  return absl::OkStatus();
}

// Fencing first: from here no write of this replica lands, whatever is still in flight. The
// dispatcher then forgets the workers and attempts (their workers move to the new active
// replica), so a later takeover rebuilds them from the store and re-registrations.
void ServerRole::StepDown() {
  store_->FenceWrites(options_.lease.name, 0);
  if (dispatcher_ != nullptr) {
    dispatcher_->SetDispatching(false);
    dispatcher_->Reset();
  }
  std::cerr << "lm-server: standby again (lease '" << options_.lease.name << "')" << std::endl;
  if (on_lost_) on_lost_();
}

bool ServerRole::active() const {
  if (!options_.replicated) return true;
  absl::MutexLock lock(&mu_);
  return lease_ != nullptr && lease_->held();
}

absl::Status ServerRole::Admit(absl::string_view method) const {
  if (active() || StandbyServes(method)) return absl::OkStatus();
  return StandbyError(active_address());
}

std::string ServerRole::active_address() const {
  absl::MutexLock lock(&mu_);
  if (lease_ == nullptr) return advertise_address_;
  return lease_->held() ? advertise_address_ : lease_->active_address();
}

std::string ServerRole::active_http_url() const {
  absl::MutexLock lock(&mu_);
  if (lease_ == nullptr) return http_url_;
  return lease_->held() ? http_url_ : lease_->active_http_url();
}

}  // namespace lmtrain
