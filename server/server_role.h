// ServerRole: whether this lm-server acts as the active server, and what it serves as a
// standby.
//
// Single server (SQLite, in-memory, or PostgreSQL with replication off): Start() recovers the
// dispatcher from the store and the server is active for good.
// Replicated (several lm-server processes on one PostgreSQL database): a LeaderLease decides.
//
//   constructed / Start(): store writes fenced with token 0 (none succeed), dispatching off
//           (Dispatcher::SetDispatching(false)) --> standby
//   standby --lease acquired--> fence writes with the lease's token, Dispatcher::Recover()
//           (like a restart: workers re-register and re-attach their running ranks), dispatching
//           on --> active
//   active --lease lost--> writes fenced off and dispatching off at once, the dispatcher's
//           in-memory state dropped (Dispatcher::Reset: workers, attempts, queue), on_lost()
//           if given (lm-server --exit-on-lease-loss exits there) --> standby, campaigning
//           again; a later takeover recovers from the store like a fresh replica
//
// What a standby serves: JobService.GetJob and ListJobs (read from the shared store) and the
// ArtifactService (the artifact folder must be shared storage). Every other JobService call
// and every WorkerService call is refused with StandbyError (UNAVAILABLE naming the active
// server's address, proto/server_targets.h), which clients follow; HTTP writes are redirected
// to active_http_url() (server/http/http_server.h). Dispatching (Sync, scheduling passes,
// lease expiry) happens only while active().
//
// Thread-safe. `store`, `clock` and `dispatcher` are not owned and must outlive this;
// `dispatcher` may be null only for a role that never becomes active (tests of a standby).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "server/dispatcher.h"
#include "server/leader_lease.h"
#include "storage/job_store.h"

namespace lmtrain {

class ServerRole {
 public:
  struct Options {
    bool replicated = false;     // Take turns with other replicas through the store's lease.
    LeaderLease::Options lease;  // When replicated; holder defaults to a random id.
  };

  ServerRole(JobStore* store, Clock* clock, Dispatcher* dispatcher, Options options,
             std::function<void()> on_lost);
  // "HOST:PORT" clients can reach a server listening on `listen` (its bound `port`): the
  // listen host, or this machine's hostname for a wildcard host (0.0.0.0, [::]).
  static std::string DefaultAdvertiseAddress(const std::string& listen, int port);
  ~ServerRole();
  ServerRole(const ServerRole&) = delete;
  ServerRole& operator=(const ServerRole&) = delete;

  // Replicated: takes the lease if it is free (so a lone server is active when this returns),
  // then keeps it or waits for it on its own thread, advertising `advertise_address` and
  // `http_url` (its HTTP front end's URL base, "" for none). Single server: nothing (lm-server
  // calls Dispatcher::Recover() before it serves).
  void Start(const std::string& advertise_address, const std::string& http_url = "");
  // Stops renewing and releases the lease (a clean shutdown hands over at once).
  void Stop();

  bool active() const;
  // OK if the gRPC method (full name, "/lmtrain.v1.JobService/SubmitJob") may run here now;
  // else StandbyError naming the active server.
  absl::Status Admit(absl::string_view method) const;
  // The address clients should use for writes: ours when active, else the lease holder's.
  std::string active_address() const;
  // The same for HTTP: our URL base when active, else the lease holder's ("" when it serves
  // no HTTP or nobody holds the lease).
  std::string active_http_url() const;

 private:
  absl::Status TakeOver(int64_t token);
  void StepDown();

  JobStore* const store_;
  Clock* const clock_;
  Dispatcher* const dispatcher_;
  const Options options_;
  const std::function<void()> on_lost_;
  mutable absl::Mutex mu_;
  std::string advertise_address_ ABSL_GUARDED_BY(mu_);
  std::string http_url_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<LeaderLease> lease_ ABSL_GUARDED_BY(mu_);  // Set by Start() when replicated.
};

}  // namespace lmtrain
