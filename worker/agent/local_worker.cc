#include "worker/agent/local_worker.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/trainer_path.h"

namespace lmtrain {
namespace {

ArtifactCache::Options CacheOptions(const LocalWorker::Options& options) {
  ArtifactCache::Options cache;
  cache.max_bytes = options.artifact_cache_max_bytes;
  return cache;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LocalWorker>> LocalWorker::Start(ChannelMaker channels,
                                                                Options options) {
  if (options.slots <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("local worker: slots must be > 0 (got ", options.slots, ")"));
  }
  if (options.work_dir.empty()) {
    return absl::InvalidArgumentError("local worker: a work folder is required");
  }
  if (options.artifact_cache_max_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("local worker: the artifact cache limit must be >= 0 (0: no limit), got ",
                     options.artifact_cache_max_bytes));
  }
  std::error_code ec;
  std::filesystem::create_directories(options.work_dir, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("local worker: cannot create ", options.work_dir, ": ", ec.message()));
  }
  if (options.trainer_path.empty()) options.trainer_path = DefaultTrainerPath();
  std::unique_ptr<LocalWorker> worker(new LocalWorker(std::move(channels), options));
  LocalWorker* w = worker.get();
  w->thread_ = std::thread([w] { w->agent_->Run(); });
  return worker;
}

LocalWorker::LocalWorker(ChannelMaker channels, const Options& options)
    : client_(channels),
      artifact_client_(channels(), ArtifactClient::Options{}),
      artifact_cache_(&artifact_client_, options.work_dir + "/artifact-cache",
                      CacheOptions(options)) {
  WorkerAgent::Options o;
  o.name = "local";
  o.slots = options.slots;
  o.work_dir = options.work_dir;
  o.trainer_path = options.trainer_path;
  o.kill_grace = options.kill_grace;
  o.advertise_address = "127.0.0.1";
  o.artifacts = &artifact_cache_;
  agent_ = std::make_unique<WorkerAgent>(&client_, &launcher_, &gpus_, o);
}

LocalWorker::~LocalWorker() { Stop(); }

void LocalWorker::Stop() {
  absl::MutexLock lock(&stop_mu_);
  agent_->Stop();
  if (thread_.joinable()) thread_.join();  // Stops its children and reports their exits first.
}

}  // namespace lmtrain
