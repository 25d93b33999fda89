#include "server/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/trainer_path.h"
#include "proto/client_channel.h"
#include "server/metrics/grpc_metrics_interceptor.h"
#include "server/metrics/observed_job_store.h"
#include "server/sync_server_threads.h"
#include "storage/postgres_job_store.h"
#include "storage/sqlite_job_store.h"

namespace lmtrain {
namespace fs = std::filesystem;

absl::StatusOr<std::unique_ptr<Server>> Server::Start(Options options) {
  std::unique_ptr<Server> server(new Server(std::move(options)));
  RETURN_IF_ERROR(server->Init());
  return server;
}

namespace {

// The job store Options::store names: SQLite in the data folder, or a PostgreSQL database.
absl::StatusOr<std::unique_ptr<JobStore>> OpenStore(const Server::Options& options) {
  if (options.store.empty()) {
    SqliteJobStore::Options sqlite;
    sqlite.path = options.data_dir + "/lm.db";
    sqlite.sync = options.sync;
    sqlite.read_connections = options.sqlite_read_connections;
    ASSIGN_OR_RETURN(std::unique_ptr<SqliteJobStore> store, SqliteJobStore::Open(sqlite));
    return store;
  }
  if (!PostgresJobStore::IsPostgresUri(options.store)) {
    return absl::InvalidArgumentError(
        "--store must be a postgres:// or postgresql:// URI (e.g. "
        "postgres://lmtrain@db.example:5432/lmtrain), or empty for SQLite in --data-dir");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<PostgresJobStore> store,
                   PostgresJobStore::Open({options.store}));
  return store;
}

}  // namespace

absl::Status Server::Init() {
  std::error_code ec;
  options_.data_dir = fs::absolute(options_.data_dir).lexically_normal().string();
  if (options_.artifacts_dir.empty()) options_.artifacts_dir = options_.data_dir + "/artifacts";
  options_.artifacts_dir = fs::absolute(options_.artifacts_dir).lexically_normal().string();
  for (const std::string& dir : {options_.data_dir, options_.artifacts_dir}) {
    fs::create_directories(dir, ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<JobStore> store, OpenStore(options_));
  store_ = std::make_unique<ObservedJobStore>(std::move(store), &metrics_);

  scheduler_ = scheduler::MakePolicyScheduler(options_.scheduler.options);
  Dispatcher::Options dispatch;
  dispatch.artifacts_dir = options_.artifacts_dir;
  dispatch.lease_timeout_ms = options_.lease_timeout_ms;
  dispatch.users = options_.scheduler.users;
  dispatch.default_user = options_.scheduler.default_user;
  dispatch.complete_pass_interval_ms = options_.scheduler.complete_pass_interval_ms;
  dispatcher_ = std::make_unique<Dispatcher>(store_.get(), SystemClock::Get(), &hub_,
                                             scheduler_.get(), std::move(dispatch));
  RETURN_IF_ERROR(StartRole());
  ArtifactStore::Options artifact_options;
  artifact_options.root = options_.artifacts_dir;
  artifact_options.max_file_bytes = options_.max_artifact_bytes;
  artifact_options.user_quota_bytes = options_.artifact_quota_bytes;
  ASSIGN_OR_RETURN(artifacts_, ArtifactStore::Open(artifact_options));
  JobManager::Options admission;
  admission.submit_policy = {options_.data_roots, options_.artifacts_dir, artifacts_.get()};
  admission.max_spec_bytes = options_.max_spec_bytes;
  admission.default_max_queued_jobs = options_.scheduler.default_user.max_queued_jobs;
  for (const auto& [user, policy] : options_.scheduler.users) {
    admission.max_queued_jobs[user] = policy.max_queued_jobs;
  }
  manager_ = std::make_unique<JobManager>(store_.get(), SystemClock::Get(), &hub_,
                                          dispatcher_.get(), std::move(admission));
  if (!options_.auth_tokens_file.empty()) {
    ASSIGN_OR_RETURN(authenticator_, TokenAuthenticator::Load(options_.auth_tokens_file));
  }
  auth_ = std::make_unique<GrpcAuth>(authenticator_.get(), &authorizer_);
  if (!options_.store.empty()) {
    auth_->SetGate([role = role_.get()](absl::string_view method) { return role->Admit(method); });
  }
  predictor_ = std::make_unique<CheckpointPredictor>(
      CheckpointPredictor::Options{
          options_.trainer_path.empty() ? DefaultTrainerPath() : options_.trainer_path,
          options_.artifacts_dir, options_.predict_timeout},
      &predict_launcher_);
  watch_fanout_ = std::make_unique<WatchFanout>(manager_.get(), &hub_);
  job_service_ = std::make_unique<JobServiceImpl>(manager_.get(), auth_.get(),
                                                  watch_fanout_.get(), predictor_.get());
  artifact_service_ = std::make_unique<ArtifactServiceImpl>(artifacts_.get(), manager_.get(),
                                                            options_.artifacts_dir, auth_.get());
  worker_service_ = std::make_unique<WorkerServiceImpl>(dispatcher_.get(), auth_.get());
  RETURN_IF_ERROR(StartHttp());
  RETURN_IF_ERROR(StartGrpc());
  const std::string advertise = options_.advertise_address.empty()
                                    ? ServerRole::DefaultAdvertiseAddress(options_.listen, port_)
                                    : options_.advertise_address;
  role_->Start(advertise, HttpUrl());
  expiry_thread_ = std::thread([this] { ExpiryLoop(); });
  serving_.Notify();
  return absl::OkStatus();
}

// HTTP takes the same tokens as gRPC ("Authorization: Bearer TOKEN"), unless the options
// name another authenticator.
absl::Status Server::StartHttp() {
  if (options_.http_listen.empty()) return absl::OkStatus();
  HttpServer::Options http;
  http.listen = options_.http_listen;
  http.authenticate = options_.http_authenticator;
  if (!http.authenticate && authenticator_ != nullptr) {
    const TokenAuthenticator* tokens = authenticator_.get();
    http.authenticate = [tokens](const std::string& header) -> absl::StatusOr<Principal> {
      Principal p = tokens->Authenticate(BearerToken(header));
      if (!p.authenticated) {
        return absl::UnauthenticatedError("a valid 'Authorization: Bearer TOKEN' is required");
      }
      return p;
    };
  }
  http.ready = [this] { return Ready(); };
  if (!options_.store.empty()) {  // Replicated: a standby redirects writes to the active one.
    http.active_replica = [role = role_.get()]() -> std::optional<std::string> {
      if (role->active()) return std::nullopt;
      return role->active_http_url();
    };
  }
  http.tls_cert = options_.tls.cert;  // The gRPC server's certificate serves HTTPS too.
  http.tls_key = options_.tls.key;
  http.predictor = predictor_.get();
  ASSIGN_OR_RETURN(http_server_, HttpServer::Start(std::move(http), manager_.get(),
                                                   dispatcher_.get(), &metrics_));
  return absl::OkStatus();
}

// The URL base standbys send HTTP writes to: --http-advertise-address, else the HTTP listen
// host (this machine's hostname for a wildcard) and the bound port.
std::string Server::HttpUrl() const {
  if (http_server_ == nullptr) return "";
  const std::string host_port =
      options_.http_advertise_address.empty()
          ? ServerRole::DefaultAdvertiseAddress(options_.http_listen, http_server_->port())
          : options_.http_advertise_address;
  return absl::StrCat(options_.tls.cert.empty() ? "http://" : "https://", host_port);
}

absl::Status Server::StartGrpc() {
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                   MakeServerCredentials(options_.tls));
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();  // For grpcurl & generic clients.
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options_.listen, credentials, &port_);
  // Auth decides each call first; the metrics interceptor counts every call, denied ones too.
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  if (auth_->intercepts()) interceptors.push_back(auth_->NewInterceptorFactory());
  interceptors.push_back(MakeGrpcMetricsInterceptorFactory(&metrics_));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  builder.RegisterService(job_service_.get());
  builder.RegisterService(worker_service_.get());
  builder.RegisterService(artifact_service_.get());
  builder.SetMaxReceiveMessageSize(options_.max_receive_message_bytes);
  // gRPC sets SO_REUSEPORT by default, so a second lm-server on the same address would start
  // and silently share the port (and split the workers) with the first: refuse instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  KeepSyncServerThreads(&builder);
  // WatchJob's callback method next to the synchronous ones leaves no steady poller otherwise.
  grpc_poller_ = std::make_unique<GrpcPoller>(&builder);
  grpc_server_ = builder.BuildAndStart();
  if (grpc_server_ == nullptr || port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options_.listen));
  }
  grpc_poller_->Start();
  return absl::OkStatus();
}

// The in-process channel skips TLS; the internal token passes authentication as a worker.
std::function<std::shared_ptr<grpc::Channel>()> Server::WorkerChannels() {
  if (!auth_->enabled() && !options_.tls.enabled()) {
    ClientChannelFactory loopback =
        ClientChannelFactory::Plaintext(absl::StrCat("127.0.0.1:", port_));
    return [loopback] {
      grpc::ChannelArguments args;  // Its own subchannel: reconnects at once after a failure.
      args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
      return loopback.NewChannel(args);
    };
  }
  std::string token;
  if (authenticator_ != nullptr) {
    token = TokenAuthenticator::GenerateToken();
    authenticator_->AddInternalToken(token, Principal{"local-worker", Role::kWorker, true});
  }
  grpc::Server* server = grpc_server_.get();
  return [server, token]() -> std::shared_ptr<grpc::Channel> {
    grpc::ChannelArguments args;
    if (token.empty()) return server->InProcessChannel(args);
    return server->experimental().InProcessChannelWithInterceptors(args, TokenInterceptors(token));
  };
}

// A PostgreSQL store is shared by replicas: one holds the lease and dispatches, the others stand
// by (server/server_role.h). A single-server store recovers here, before anything is served.
absl::Status Server::StartRole() {
  const bool replicated = !options_.store.empty();
  ServerRole::Options role;
  role.replicated = replicated;
  role.lease.ttl_ms = options_.lease_ttl_ms;
  role.lease.renew_period_ms = options_.lease_renew_ms;
  role_ = std::make_unique<ServerRole>(store_.get(), SystemClock::Get(), dispatcher_.get(),
                                       std::move(role), options_.on_lease_lost);
  return replicated ? absl::OkStatus() : dispatcher_->Recover();
}

absl::Status Server::Ready() {
  if (!serving_.HasBeenNotified()) return absl::UnavailableError("starting");
  if (stop_.HasBeenNotified()) return absl::UnavailableError("shutting down");
  JobFilter one;
  one.limit = 1;
  return store_->ListJobs(one).status();
}

absl::Status Server::ReloadTokens() {
  if (authenticator_ == nullptr) {
    return absl::FailedPreconditionError("authentication is off (no --auth-tokens)");
  }
  return authenticator_->Reload();
}

void Server::ExpiryLoop() {
  const absl::Duration period =
      absl::Milliseconds(std::max<int64_t>(100, options_.lease_timeout_ms / 4));
  while (!stop_.WaitForNotificationWithTimeout(period)) {
    // Thousands of orphans after a restart expire a batch per call. Between batches this thread
    // pauses as long as the batch took: the callers that queued meanwhile on the dispatcher's
    // and the store's locks get them (a mutex hands over to a waiter only if the unlocking
    // thread does not take it straight back), at the cost of a requeue twice as long.
    for (;;) {
      const absl::Time start = absl::Now();
      if (!role_->active() || !dispatcher_->ExpireLeases()) break;
      const absl::Duration pause = std::max(absl::Milliseconds(1), absl::Now() - start);
      if (stop_.WaitForNotificationWithTimeout(pause)) return;
    }
  }
}

void Server::Shutdown() {
  if (stop_.HasBeenNotified()) {
    stopped_.WaitForNotification();
    return;
  }
  stop_.Notify();
  role_->Stop();  // A standby takes over at once.
  if (http_server_) http_server_->Stop();  // No HTTP handler touches the core after this.
  watch_fanout_->Shutdown();  // Ends every WatchJob stream UNAVAILABLE (clients fail over).
  dispatcher_->Shutdown();  // Wakes the workers' long-polls.
  grpc_server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  grpc_poller_->Stop();  // Its queue outlives the server.
  expiry_thread_.join();
  stopped_.Notify();
}

void Server::Wait() { stopped_.WaitForNotification(); }

Server::~Server() {
  if (grpc_server_ != nullptr) Shutdown();
}

}  // namespace lmtrain
