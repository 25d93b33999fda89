// Server: lm-server wired together. Owns, in dependency order: the job store, the event
// hub, the scheduler, the dispatcher, its role (active, or a standby replica on a shared
// PostgreSQL store: server/server_role.h), the job manager, authentication and authorization
// (when a tokens file is given; docs/security.md), the WatchJob fan-out
// (server/watch_fanout.h), the gRPC services (JobService, WorkerService, ArtifactService, the
// standard health service) with a thread that keeps polling their sockets (server/grpc_poller.h),
// a lease-expiry thread,
// and optionally the HTTP front end (server/http: dashboard, JSON API, Prometheus /metrics).
// It runs no worker itself: lm-server's main adds a LocalWorker (worker/agent/local_worker.h)
// that reaches it through WorkerChannels().
//
//   Start() -> serving -> Shutdown() (SIGTERM) -> Wait() returns
//
// Thread-safe: Shutdown() may be called from any thread, once or more.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "common/process_launcher.h"
#include "server/artifact_service.h"
#include "server/artifacts/artifact_store.h"
#include "server/auth/authorizer.h"
#include "server/auth/grpc_auth.h"
#include "server/auth/server_credentials.h"
#include "server/auth/token_authenticator.h"
#include "server/checkpoint_predictor.h"
#include "server/dispatcher.h"
#include "server/event_hub.h"
#include "server/grpc_poller.h"
#include "server/http/http_server.h"
#include "server/job_manager.h"
#include "server/job_service.h"
#include "server/metrics/server_metrics.h"
#include "server/scheduler_config.h"
#include "server/server_role.h"
#include "server/watch_fanout.h"
#include "server/worker_service.h"
#include "storage/job_store.h"
#include "storage/sqlite_job_store.h"

namespace lmtrain {

class Server {
 public:
  struct Options {
    std::string listen = "127.0.0.1:50051";   // Port 0 picks a free port (see port()).
    std::string data_dir = "./lmtrain-data";  // SQLite at data_dir/lm.db.
    // The job store: "" for SQLite in data_dir, or a postgres:// / postgresql:// URI instead
    // (PostgresJobStore, storage/postgres_job_store.h).
    std::string store;
    std::string artifacts_dir;                // Default: data_dir/artifacts.
    // When a store commit reaches the disk: kNormal (default) survives a process crash, kFull
    // (--sync full) also power loss (storage/sqlite_job_store.h, docs/operations.md).
    SqliteJobStore::Sync sync = SqliteJobStore::Sync::kNormal;
    // SQLite store: connections that list calls and event reads run on beside the writer
    // (SqliteJobStore::Options::read_connections; --sqlite-read-connections). 0 to 64.
    int sqlite_read_connections = 2;
    // lm-train, for predictions; default next to us.
    std::string trainer_path;
    absl::Duration predict_timeout = absl::Seconds(120);  // One lm-train predict child.
    int64_t lease_timeout_ms = 15000;
    SchedulerConfig scheduler;  // Policy switches, seed, per-user weights and limits.
    // Security (docs/security.md).
    std::string auth_tokens_file;  // YAML token list (server/auth/token_file.h); "" = auth off.
    ServerTlsOptions tls;          // Server certificate (+ client CA for mutual TLS).
    int max_receive_message_bytes = 16 << 20;  // Largest request gRPC accepts.
    int64_t max_spec_bytes = 1 << 20;          // Largest job file a submit may carry.
    // Artifact store (docs/operations.md): per-file limit, per-user quota (0: none), and the
    // data roots jobs may read local paths under (empty: any path).
    int64_t max_artifact_bytes = int64_t{16} << 30;
    int64_t artifact_quota_bytes = 0;
    std::vector<std::string> data_roots;
    // HTTP (dashboard, JSON API, /metrics): HOST:PORT, port 0 picks a free port (see
    // http_port()); "" = no HTTP. (lm-server's --http-listen defaults to 127.0.0.1:8080.)
    std::string http_listen;
    // Empty: the tokens file's authenticator when auth is on, else everyone is admin.
    HttpAuthenticator http_authenticator;
    // Replicas on one PostgreSQL store take turns through its lease (server/server_role.h):
    // the address clients reach this one at ("" = ServerRole::DefaultAdvertiseAddress), the
    // HOST:PORT browsers reach its HTTP front end at, where standbys redirect HTTP writes
    // ("" = the same default from http_listen and the bound HTTP port), the lease's TTL and
    // renewal period. A replica that loses the lease becomes a standby again and campaigns;
    // on_lease_lost, when set, is called after that (lm-server --exit-on-lease-loss exits).
    std::string advertise_address;
    std::string http_advertise_address;
    int64_t lease_ttl_ms = 5000;
    int64_t lease_renew_ms = 1000;
    std::function<void()> on_lease_lost;
  };

  // Opens the store, recovers running jobs, starts serving. Errors name the file or address.
  static absl::StatusOr<std::unique_ptr<Server>> Start(Options options);
  ~Server();

  int port() const { return port_; }
  int http_port() const { return http_server_ ? http_server_->port() : 0; }  // 0: no HTTP.
  // The HTTP front end's routes (empty without HTTP).
  std::vector<HttpRoute> http_routes() const {
    return http_server_ ? http_server_->routes() : std::vector<HttpRoute>{};
  }
  ServerMetrics& metrics() { return metrics_; }
  // WatchJob streams open now (from the call until gRPC is done with the stream).
  int watch_streams() const { return watch_fanout_->watchers(); }
  const Options& options() const { return options_; }
  void Shutdown();
  void Wait();  // Until Shutdown() has completed.
  // Makes channels into this server for a worker agent in this process (LocalWorker), fresh
  // on each call, from any thread. With authentication or TLS on they are gRPC in-process
  // channels (no certificate to verify) sending an internal worker token made by this call;
  // otherwise plaintext channels to 127.0.0.1:port(). The maker must not outlive the server.
  std::function<std::shared_ptr<grpc::Channel>()> WorkerChannels();
  // Re-reads the tokens file (SIGHUP); on error keeps the old tokens. FailedPrecondition when
  // authentication is off.
  absl::Status ReloadTokens();

 private:
  explicit Server(Options options) : options_(std::move(options)) {}
  absl::Status Init();
  absl::Status StartGrpc();
  absl::Status StartHttp();
  absl::Status StartRole();
  std::string HttpUrl() const;
  void ExpiryLoop();
  absl::Status Ready();  // /readyz: started, not stopping, store answers.

  Options options_;
  ServerMetrics metrics_;  // Before the store, which records into it.
  std::unique_ptr<JobStore> store_;
  EventHub hub_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::unique_ptr<ServerRole> role_;  // Active or standby; created right after the dispatcher.
  std::unique_ptr<ArtifactStore> artifacts_;
  std::unique_ptr<JobManager> manager_;
  std::unique_ptr<TokenAuthenticator> authenticator_;  // Null: authentication off.
  Authorizer authorizer_;
  std::unique_ptr<GrpcAuth> auth_;
  PosixProcessLauncher predict_launcher_;  // lm-train predict children.
  std::unique_ptr<CheckpointPredictor> predictor_;
  std::unique_ptr<WatchFanout> watch_fanout_;  // WatchJob streams; outlives grpc_server_.
  std::unique_ptr<JobServiceImpl> job_service_;
  std::unique_ptr<ArtifactServiceImpl> artifact_service_;
  std::unique_ptr<WorkerServiceImpl> worker_service_;
  std::unique_ptr<HttpServer> http_server_;
  std::unique_ptr<GrpcPoller> grpc_poller_;  // Declared before grpc_server_: outlives it.
  std::unique_ptr<grpc::Server> grpc_server_;
  int port_ = 0;
  absl::Notification serving_;
  absl::Notification stop_;
  absl::Notification stopped_;
  std::thread expiry_thread_;
};

}  // namespace lmtrain
