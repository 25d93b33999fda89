// Server: lm-server wired together. Owns, in dependency order: the job store, the event
// hub, the scheduler, the dispatcher, the job manager, authentication and authorization
// (when a tokens file is given; docs/security.md), the gRPC services (JobService,
// WorkerService, ArtifactService, the standard health service), a lease-expiry thread,
// optionally the HTTP front end (server/http: dashboard, JSON API, Prometheus /metrics) and
// in-process worker agents
// (`--local-worker N`: the embedded default, one command for a working system).
//
//   Start() -> serving -> Shutdown() (SIGTERM) -> Wait() returns
//
// Thread-safe: Shutdown() may be called from any thread, once or more.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "server/auth/authorizer.h"
#include "server/auth/grpc_auth.h"
#include "server/auth/server_credentials.h"
#include "server/auth/token_authenticator.h"
#include "artifacts/artifact_client.h"
#include "server/checkpoint_predictor.h"
#include "server/artifact_service.h"
#include "server/artifacts/artifact_store.h"
#include "server/dispatcher.h"
#include "server/event_hub.h"
#include "server/http/http_server.h"
#include "server/job_manager.h"
#include "server/job_service.h"
#include "server/metrics/server_metrics.h"
#include "server/scheduler_config.h"
#include "server/worker_service.h"
#include "storage/job_store.h"
#include "storage/sqlite_job_store.h"
#include "worker/agent/artifact_cache.h"
#include "worker/agent/nvml_gpu_inventory.h"
#include "worker/agent/process_launcher.h"
#include "worker/agent/server_client.h"
#include "worker/agent/worker_agent.h"

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
    int local_worker_slots = 0;               // >0: run an in-process worker agent.
    // lm-train, for the local worker and for predictions; default next to us.
    std::string trainer_path;
    absl::Duration predict_timeout = absl::Seconds(120);  // One lm-train predict child.
    int64_t lease_timeout_ms = 15000;
    absl::Duration kill_grace = absl::Seconds(10);
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
  };

  // Opens the store, recovers running jobs, starts serving. Errors name the file or address.
  static absl::StatusOr<std::unique_ptr<Server>> Start(Options options);
  ~Server();

  int port() const { return port_; }
  int http_port() const { return http_server_ ? http_server_->port() : 0; }  // 0: no HTTP.
  ServerMetrics& metrics() { return metrics_; }
  const Options& options() const { return options_; }
  void Shutdown();
  void Wait();  // Until Shutdown() has completed.
  // Re-reads the tokens file (SIGHUP); on error keeps the old tokens. FailedPrecondition when
  // authentication is off.
  absl::Status ReloadTokens();

 private:
  explicit Server(Options options) : options_(std::move(options)) {}
  absl::Status Init();
  absl::Status StartGrpc();
  absl::Status StartHttp();
  void StartLocalWorker();
  void ExpiryLoop();
  absl::Status Ready();  // /readyz: started, not stopping, store answers.

  Options options_;
  ServerMetrics metrics_;  // Before the store, which records into it.
  std::unique_ptr<JobStore> store_;
  EventHub hub_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::unique_ptr<ArtifactStore> artifacts_;
  std::unique_ptr<JobManager> manager_;
  std::unique_ptr<TokenAuthenticator> authenticator_;  // Null: authentication off.
  Authorizer authorizer_;
  std::unique_ptr<GrpcAuth> auth_;
  PosixProcessLauncher predict_launcher_;  // lm-train predict children.
  std::unique_ptr<CheckpointPredictor> predictor_;
  std::unique_ptr<JobServiceImpl> job_service_;
  std::unique_ptr<ArtifactServiceImpl> artifact_service_;
  std::unique_ptr<WorkerServiceImpl> worker_service_;
  std::unique_ptr<HttpServer> http_server_;
  std::unique_ptr<grpc::Server> grpc_server_;
  int port_ = 0;
  absl::Notification serving_;
  absl::Notification stop_;
  absl::Notification stopped_;
  std::thread expiry_thread_;
  // The embedded local worker.
  std::unique_ptr<GrpcServerClient> local_client_;
  std::unique_ptr<ArtifactClient> local_artifact_client_;
  std::unique_ptr<ArtifactCache> local_artifact_cache_;
  PosixProcessLauncher local_launcher_;
  NvmlGpuInventory local_gpus_;  // The machine's GPUs, for the in-process worker.
  std::unique_ptr<WorkerAgent> local_agent_;
  std::thread local_thread_;
};

}  // namespace lmtrain
