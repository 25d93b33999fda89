// lm-server: the lmtrain control plane (gRPC API, scheduler, SQLite or PostgreSQL store).
//   lm-server --listen HOST:PORT --data-dir DIR [--artifacts DIR] [--local-worker N]
//             [--artifact-cache-max-bytes N]   (the embedded worker's artifact cache)
//             [--sync normal|full]   (store durability; docs/operations.md)
//             [--sqlite-read-connections N]   (SQLite reads beside the writer)
//             [--store postgres://USER@HOST:PORT/DB] (default $LMTRAIN_STORE, else SQLite)
//             [--scheduler-config FILE] (see server/scheduler_config.h)
//             [--auth-tokens FILE] [--tls-cert F --tls-key F [--tls-client-ca F]]
//             [--max-request-bytes N] [--max-spec-bytes N]   (see docs/security.md)
//             [--data-roots DIR,...] [--max-artifact-bytes N] [--artifact-quota-bytes N]
//             [--http-listen HOST:PORT] (dashboard, JSON API, /metrics; docs/dashboard.md)
//             [--advertise-address HOST:PORT] [--http-advertise-address HOST:PORT]
//             [--lease-ttl-ms N] [--lease-renew-ms N] [--exit-on-lease-loss]
//             (replicas on one PostgreSQL store; docs/operations.md)
// An active replica that loses the lease becomes a standby in-process; with
// --exit-on-lease-loss it exits with status 3 instead (its supervisor restarts it).
// SIGHUP re-reads the tokens file. The composition root: the Server, plus a LocalWorker
// (worker/agent/local_worker.h) reaching it in-process when --local-worker N > 0.
#include <signal.h>
#include <stdlib.h>

#include <atomic>
#include <iostream>

#include "absl/synchronization/mutex.h"
#include "common/command_line.h"
#include "common/malloc_tuning.h"
#include "common/termination_signals.h"
#include "server/server.h"
#include "server/server_flags.h"
#include "worker/agent/local_worker.h"

namespace lmtrain {
namespace {

void PrintBanner(const Server& s, const Server::Options& o) {
  std::cout << "lm-server: listening on " << o.listen.substr(0, o.listen.rfind(':')) << ":"
            << s.port() << (o.tls.enabled() ? " (TLS)" : "") << ", data in " << s.options().data_dir
            << (o.store.empty() ? "" : ", jobs in PostgreSQL")
            << (o.auth_tokens_file.empty() ? ", authentication off" : ", authentication on")
            << std::endl;
  if (s.http_port() != 0) {
    const std::string& h = o.http_listen;
    std::cout << "lm-server: dashboard at http://" << h.substr(0, h.rfind(':')) << ":"
              << s.http_port() << "/" << std::endl;
  }
}

// The embedded worker of --local-worker N (null for 0).
absl::StatusOr<std::unique_ptr<LocalWorker>> StartLocalWorker(Server& s, const ServerFlags& f) {
  if (f.local_workers <= 0) return nullptr;
  LocalWorker::Options w;
  w.slots = static_cast<int>(f.local_workers);
  w.work_dir = s.options().data_dir + "/worker";
  w.trainer_path = f.options.trainer_path;
  w.artifact_cache_max_bytes = f.local_cache_max_bytes;
  return LocalWorker::Start(s.WorkerChannels(), w);
}

}  // namespace
}  // namespace lmtrain

int main(int argc, char** argv) {
  using namespace lmtrain;
  // Debian's abseil is built without NDEBUG, so every Mutex lock would otherwise feed a
  // lock-order graph (about 2% of a durable submit's CPU); the tests keep the detection on.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  TuneMallocForServer();  // Requests stop page-faulting freed heap memory back in.
  // First, before any thread exists, so every thread inherits the blocked signals.
  absl::Notification term;
  std::atomic<Server*> running{nullptr};
  WatchSignals({SIGTERM, SIGINT, SIGHUP}, [&term, &running](int signo) {
    if (signo != SIGHUP) {
      if (!term.HasBeenNotified()) term.Notify();
      return;
    }
    Server* s = running.load();
    if (s == nullptr) return;
    absl::Status reloaded = s->ReloadTokens();
    std::cerr << "lm-server: SIGHUP: "
              << (reloaded.ok() ? "tokens file reloaded" : std::string(reloaded.message()))
              << std::endl;
  });
  ServerFlags flags;
  CommandLine cl("lm-server", "the lmtrain control plane");
  AddServerFlags(&cl, &flags);
  auto args = cl.Parse(argc - 1, argv + 1);
  if (!args.ok()) {
    std::cerr << args.status().message() << "\n";
    return IsHelpRequest(args.status()) ? 0 : 2;
  }
  if (absl::Status s = FinishServerFlags(&flags); !s.ok()) {
    std::cerr << "lm-server: " << s.message() << "\n";
    return 2;
  }
  Server::Options& o = flags.options;
  std::atomic<bool> lease_lost{false};
  if (flags.exit_on_lease_loss) {
    o.on_lease_lost = [&term, &lease_lost] {
      lease_lost.store(true);
      if (!term.HasBeenNotified()) term.Notify();
    };
  }
  if (std::string warning = CleartextTokensWarning(o); !warning.empty()) {
    std::cerr << "lm-server: warning: " << warning << std::endl;
  }
  auto server = Server::Start(o);
  if (!server.ok()) {
    std::cerr << "lm-server: " << server.status().message() << "\n";
    return 1;
  }
  Server* s = server->get();
  running.store(s);
  PrintBanner(*s, o);
  auto local_worker = StartLocalWorker(*s, flags);
  if (!local_worker.ok()) {
    std::cerr << "lm-server: " << local_worker.status().message() << "\n";
    s->Shutdown();
    return 1;
  }
  term.WaitForNotification();
  std::cout << "lm-server: shutting down" << (lease_lost ? " (lost the lease)" : "") << std::endl;
  running.store(nullptr);
  if (*local_worker) (*local_worker)->Stop();  // Its children's exits reach the server first.
  s->Shutdown();
  return lease_lost ? 3 : 0;
}
