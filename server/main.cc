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
#include <filesystem>
#include <iostream>

#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "common/command_line.h"
#include "common/malloc_tuning.h"
#include "common/termination_signals.h"
#include "server/server.h"
#include "worker/agent/local_worker.h"

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
  Server::Options o;
  o.http_listen = "127.0.0.1:8080";
  int64_t local_workers = 0, lease_ms = o.lease_timeout_ms;
  int64_t local_cache_max_bytes = ArtifactCache::kDefaultMaxBytes;
  int64_t max_request_bytes = o.max_receive_message_bytes;
  int64_t sqlite_readers = o.sqlite_read_connections;
  std::string scheduler_config, data_roots, sync = "normal";
  CommandLine cl("lm-server", "the lmtrain control plane");
  cl.AddString("listen", &o.listen, "gRPC address HOST:PORT (port 0: any free port)");
  cl.AddString("data-dir", &o.data_dir, "folder for lm.db and artifacts");
  cl.AddString("sync", &sync,
               "normal: commits survive a crash of lm-server; full: also power loss (an fsync "
               "per commit, shared by concurrent submits)");
  cl.AddInt("sqlite-read-connections", &sqlite_readers,
            "SQLite store: connections that lists and event reads run on beside the writer "
            "(0 to 64; 0: on the writer, one call at a time)");
  if (const char* store = getenv("LMTRAIN_STORE")) o.store = store;
  cl.AddString("store", &o.store,
               "job store: postgres://USER@HOST:PORT/DB (default $LMTRAIN_STORE; '': SQLite "
               "in --data-dir)");
  cl.AddString("artifacts", &o.artifacts_dir, "artifacts folder (default DATA_DIR/artifacts)");
  cl.AddInt("local-worker", &local_workers, "run an embedded worker with N slots");
  cl.AddInt("artifact-cache-max-bytes", &local_cache_max_bytes,
            "embedded worker: most bytes of fetched artifacts kept in DATA_DIR/worker/"
            "artifact-cache, least recently used evicted first (default 50 GiB; 0: no limit)");
  cl.AddString("trainer", &o.trainer_path,
               "lm-train path for the embedded worker and predictions (default: next to us)");
  cl.AddInt("lease-timeout-ms", &lease_ms, "worker heartbeat timeout");
  cl.AddString("http-listen", &o.http_listen,
               "dashboard, JSON API and /metrics HOST:PORT (port 0: any free port; '': off)");
  cl.AddString("scheduler-config", &scheduler_config,
               "YAML: user weights and limits, backfill, preemption, seed");
  cl.AddString("auth-tokens", &o.auth_tokens_file,
               "YAML list of bearer tokens and roles; turns authentication on");
  cl.AddString("tls-cert", &o.tls.cert, "PEM server certificate (turns TLS on, with --tls-key)");
  cl.AddString("tls-key", &o.tls.key, "PEM private key of --tls-cert");
  cl.AddString("tls-client-ca", &o.tls.client_ca,
               "PEM CA: require client certificates signed by it (mutual TLS)");
  cl.AddInt("max-request-bytes", &max_request_bytes, "largest gRPC request accepted");
  cl.AddInt("max-spec-bytes", &o.max_spec_bytes, "largest job file a submit may carry");
  cl.AddString("data-roots", &data_roots,
               "DIR,...: jobs may only read local data/model/tokenizer paths under these");
  cl.AddInt("max-artifact-bytes", &o.max_artifact_bytes, "largest file lmctl may upload");
  cl.AddInt("artifact-quota-bytes", &o.artifact_quota_bytes,
            "bytes of uploads charged to one user (0: unlimited)");
  cl.AddString("advertise-address", &o.advertise_address,
               "HOST:PORT clients reach this replica at (PostgreSQL store; default: listen "
               "host, or the hostname for 0.0.0.0, and the bound port)");
  cl.AddString("http-advertise-address", &o.http_advertise_address,
               "HOST:PORT browsers reach this replica's HTTP at; standbys redirect writes there "
               "(default: --http-listen host, or the hostname for 0.0.0.0, and the bound port)");
  bool exit_on_lease_loss = false;
  cl.AddBool("exit-on-lease-loss", &exit_on_lease_loss,
             "exit with status 3 when the lease is lost, instead of standing by again");
  cl.AddInt("lease-ttl-ms", &o.lease_ttl_ms, "active replica's lease TTL (PostgreSQL store)");
  cl.AddInt("lease-renew-ms", &o.lease_renew_ms, "how often the lease is renewed or sought");
  std::atomic<bool> lease_lost{false};
  o.on_lease_lost = [&term, &lease_lost] {
    lease_lost.store(true);
    if (!term.HasBeenNotified()) term.Notify();
  };
  auto args = cl.Parse(argc - 1, argv + 1);
  if (!args.ok()) {
    std::cerr << args.status().message() << "\n";
    return IsHelpRequest(args.status()) ? 0 : 2;
  }
  auto sync_mode = SqliteJobStore::ParseSync(sync);
  if (!sync_mode.ok()) {
    std::cerr << "lm-server: " << sync_mode.status().message() << "\n";
    return 2;
  }
  o.sync = *sync_mode;
  if (sqlite_readers < 0 || sqlite_readers > SqliteJobStore::kMaxReadConnections) {
    std::cerr << "lm-server: --sqlite-read-connections must be 0 to "
              << SqliteJobStore::kMaxReadConnections << " (got " << sqlite_readers << ")\n";
    return 2;
  }
  o.sqlite_read_connections = static_cast<int>(sqlite_readers);
  for (absl::string_view root : absl::StrSplit(data_roots, ',', absl::SkipEmpty())) {
    o.data_roots.push_back(std::filesystem::absolute(std::string(root)).string());
  }
  o.lease_timeout_ms = lease_ms;
  if (!exit_on_lease_loss) o.on_lease_lost = nullptr;
  if (o.lease_renew_ms <= 0 || o.lease_ttl_ms <= o.lease_renew_ms) {
    std::cerr << "lm-server: need 0 < --lease-renew-ms < --lease-ttl-ms\n";
    return 2;
  }
  if (max_request_bytes <= 0 || max_request_bytes > (1LL << 31) - 1) {
    std::cerr << "lm-server: --max-request-bytes must be in 1..2147483647\n";
    return 2;
  }
  o.max_receive_message_bytes = static_cast<int>(max_request_bytes);
  if (!scheduler_config.empty()) {
    auto config = LoadSchedulerConfig(scheduler_config);
    if (!config.ok()) {
      std::cerr << "lm-server: " << config.status().message() << "\n";
      return 2;
    }
    o.scheduler = *config;
  }
  const std::string host = o.listen.substr(0, o.listen.rfind(':'));
  if (!o.auth_tokens_file.empty() && !o.tls.enabled() && host != "127.0.0.1" &&
      host != "localhost" && host != "[::1]") {
    std::cerr << "lm-server: warning: bearer tokens travel in clear text on " << o.listen
              << "; add --tls-cert/--tls-key (docs/security.md)" << std::endl;
  }
  auto server = Server::Start(o);
  if (!server.ok()) {
    std::cerr << "lm-server: " << server.status().message() << "\n";
    return 1;
  }
  Server* s = server->get();
  running.store(s);
  std::cout << "lm-server: listening on " << o.listen.substr(0, o.listen.rfind(':')) << ":"
            << s->port() << (o.tls.enabled() ? " (TLS)" : "") << ", data in "
            << s->options().data_dir << (o.store.empty() ? "" : ", jobs in PostgreSQL")
            << (o.auth_tokens_file.empty() ? ", authentication off" : ", authentication on")
            << std::endl;
  if (s->http_port() != 0) {
    const std::string& h = o.http_listen;
    std::cout << "lm-server: dashboard at http://" << h.substr(0, h.rfind(':')) << ":"
              << s->http_port() << "/" << std::endl;
  }
  std::unique_ptr<LocalWorker> local_worker;
  if (local_workers > 0) {
    LocalWorker::Options w;
    w.slots = static_cast<int>(local_workers);
    w.work_dir = s->options().data_dir + "/worker";
    w.trainer_path = o.trainer_path;
    w.artifact_cache_max_bytes = local_cache_max_bytes;
    auto started = LocalWorker::Start(s->WorkerChannels(), w);
    if (!started.ok()) {
      std::cerr << "lm-server: " << started.status().message() << "\n";
      s->Shutdown();
      return 1;
    }
    local_worker = *std::move(started);
  }
  term.WaitForNotification();
  std::cout << "lm-server: shutting down" << (lease_lost ? " (lost the lease)" : "") << std::endl;
  running.store(nullptr);
  if (local_worker) local_worker->Stop();  // Its children's exits reach the server first.
  s->Shutdown();
  return lease_lost ? 3 : 0;
}
