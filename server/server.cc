#include "server/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "storage/sqlite_job_store.h"

namespace lmtrain {
namespace fs = std::filesystem;

absl::StatusOr<std::unique_ptr<Server>> Server::Start(Options options) {
  std::unique_ptr<Server> server(new Server(std::move(options)));
  RETURN_IF_ERROR(server->Init());
  return server;
}

absl::Status Server::Init() {
  std::error_code ec;
  options_.data_dir = fs::absolute(options_.data_dir).lexically_normal().string();
  if (options_.artifacts_dir.empty()) options_.artifacts_dir = options_.data_dir + "/artifacts";
  options_.artifacts_dir = fs::absolute(options_.artifacts_dir).lexically_normal().string();
  for (const std::string& dir : {options_.data_dir, options_.artifacts_dir}) {
    fs::create_directories(dir, ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  }
  SqliteJobStore::Options store_options;
  store_options.path = options_.data_dir + "/lm.db";
  ASSIGN_OR_RETURN(store_, SqliteJobStore::Open(store_options));

  scheduler_ = scheduler::MakePolicyScheduler(options_.scheduler.options);
  Dispatcher::Options dispatch;
  dispatch.artifacts_dir = options_.artifacts_dir;
  dispatch.lease_timeout_ms = options_.lease_timeout_ms;
  dispatch.users = options_.scheduler.users;
  dispatch.default_user = options_.scheduler.default_user;
  dispatcher_ = std::make_unique<Dispatcher>(store_.get(), SystemClock::Get(), &hub_,
                                             scheduler_.get(), std::move(dispatch));
  RETURN_IF_ERROR(dispatcher_->Recover());
  manager_ =
      std::make_unique<JobManager>(store_.get(), SystemClock::Get(), &hub_, dispatcher_.get());
  job_service_ = std::make_unique<JobServiceImpl>(manager_.get());
  worker_service_ = std::make_unique<WorkerServiceImpl>(dispatcher_.get(), &hub_);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();  // For grpcurl & generic clients.
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options_.listen, grpc::InsecureServerCredentials(), &port_);
  builder.RegisterService(job_service_.get());
  builder.RegisterService(worker_service_.get());
  builder.SetMaxReceiveMessageSize(16 << 20);
  // gRPC sets SO_REUSEPORT by default, so a second lm-server on the same address would start
  // and silently share the port (and split the workers) with the first: refuse instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  grpc_server_ = builder.BuildAndStart();
  if (grpc_server_ == nullptr || port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options_.listen));
  }
  expiry_thread_ = std::thread([this] { ExpiryLoop(); });

  if (options_.local_worker_slots > 0) {
    local_client_ = std::make_unique<GrpcServerClient>(absl::StrCat("127.0.0.1:", port_));
    WorkerAgent::Options o;
    o.name = "local";
    o.slots = options_.local_worker_slots;
    o.work_dir = options_.data_dir + "/worker";
    o.trainer_path = options_.trainer_path.empty() ? DefaultTrainerPath() : options_.trainer_path;
    o.kill_grace = options_.kill_grace;
    o.advertise_address = "127.0.0.1";
    fs::create_directories(o.work_dir, ec);
    local_agent_ = std::make_unique<WorkerAgent>(local_client_.get(), &local_launcher_, o);
    local_thread_ = std::thread([this] { local_agent_->Run(); });
  }
  return absl::OkStatus();
}

void Server::ExpiryLoop() {
  const absl::Duration period =
      absl::Milliseconds(std::max<int64_t>(100, options_.lease_timeout_ms / 4));
  while (!stop_.WaitForNotificationWithTimeout(period)) dispatcher_->ExpireLeases();
}

void Server::Shutdown() {
  if (stop_.HasBeenNotified()) {
    stopped_.WaitForNotification();
    return;
  }
  stop_.Notify();
  if (local_agent_) {
    local_agent_->Stop();
    local_thread_.join();  // Stops its children and reports their exits first.
  }
  hub_.Shutdown();  // Wakes long-polls and watch streams.
  grpc_server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  expiry_thread_.join();
  stopped_.Notify();
}

void Server::Wait() { stopped_.WaitForNotification(); }

Server::~Server() {
  if (grpc_server_ != nullptr) Shutdown();
}

}  // namespace lmtrain
