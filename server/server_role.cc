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

void ServerRole::Start(const std::string& advertise_address) {
  if (!options_.replicated) return;
  LeaderLease::Options lease = options_.lease;
  if (lease.holder.empty()) lease.holder = RandomHolder();
  lease.advertise_address = advertise_address;
  LeaderLease::Callbacks callbacks;
  callbacks.acquired = [this](int64_t token) { return TakeOver(token); };
  callbacks.lost = [this] {
    store_->FenceWrites(options_.lease.name, 0);
    if (dispatcher_ != nullptr) dispatcher_->SetDispatching(false);
    if (on_lost_) on_lost_();
  };
  auto leader = std::make_shared<LeaderLease>(store_, clock_, std::move(lease), std::move(callbacks));
  leader->Step();
  {
    absl::MutexLock lock(&mu_);
    advertise_address_ = advertise_address;
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
  return absl::OkStatus();
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

}  // namespace lmtrain
