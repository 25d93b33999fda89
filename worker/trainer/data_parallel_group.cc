#include "worker/trainer/data_parallel_group.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <cstdlib>
#include <exception>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "worker/trainer/gradient_sync.h"

namespace lmtrain {
namespace {

// Runs `fn` (returning absl::Status); a c10d / Gloo exception becomes Unavailable naming
// the rank and `what`.
template <typename Fn>
absl::Status Guard(int rank, int world, const char* what, Fn&& fn) {
  try {
    return fn();
  } catch (const c10::Error& e) {
    return absl::UnavailableError(
        absl::StrCat("distributed rank ", rank, " of ", world, ": ", what,
                     " failed (a peer was lost or timed out): ", e.what_without_backtrace()));
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("distributed rank ", rank, " of ", world, ": ", what,
                     " failed (a peer was lost or timed out): ", e.what()));
  }
}

c10::intrusive_ptr<c10d::Backend> MakeGloo(const c10::intrusive_ptr<c10d::Store>& store,
                                           const DistributedEnv& env) {
  auto options = c10d::ProcessGroupGloo::Options::create(env.timeout);
  // As torch.distributed: GLOO_SOCKET_IFNAME picks the interface, else the host name's.
  const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
  options->devices.push_back(ifname != nullptr && *ifname != '\0'
                                 ? c10d::ProcessGroupGloo::createDeviceForInterface(ifname)
                                 : c10d::ProcessGroupGloo::createDefaultDevice());
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, options);
}

c10::intrusive_ptr<c10d::Backend> MakeBackend(const c10::intrusive_ptr<c10d::Store>& store,
                                              const DistributedEnv& env, torch::Device device) {
#ifdef USE_C10D_NCCL
  if (device.is_cuda()) {
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = env.timeout;
    return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, env.rank, env.world_size, options);
  }
#endif
  TORCH_CHECK(!device.is_cuda(), "this LibTorch has no NCCL backend for CUDA tensors");
  return MakeGloo(store, env);
}

// The group over c10d; see the header.
class C10dGroup : public DataParallelGroup {
 public:
  C10dGroup(DistributedEnv env, torch::Device device, c10::intrusive_ptr<c10d::Store> store,
            c10::intrusive_ptr<c10d::Backend> group)
      : env_(std::move(env)), device_(device), store_(std::move(store)), group_(std::move(group)) {}

  int rank() const override { return env_.rank; }
  int world_size() const override { return env_.world_size; }

  absl::Status BeginGradientSync(const std::vector<torch::Tensor>& params) override {
    return Guard(rank(), world_size(), "gradient all-reduce", [&] {
      sync_ = MakeSync(params);
      sync_->Arm();
      return absl::OkStatus();
    });
  }

  absl::Status SumGradients(const std::vector<torch::Tensor>& params) override {
    std::unique_ptr<GradientSync> sync = sync_ != nullptr ? std::move(sync_) : MakeSync(params);
    return Guard(rank(), world_size(), "gradient all-reduce", [&] {
      sync->Finish();
      return absl::OkStatus();
    });
  }

  absl::StatusOr<std::vector<double>> SumValues(const std::vector<double>& values) override {
    std::vector<double> sums;
    absl::Status status = Guard(rank(), world_size(), "all-reduce of step statistics", [&] {
      torch::Tensor t = torch::tensor(values, torch::kFloat64).to(device_);
      AllReduce(t);
      t = t.cpu();
      sums.assign(t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    return sums;
  }

  absl::Status BroadcastFromRoot(const std::vector<torch::Tensor>& tensors) override {
    return Guard(rank(), world_size(), "broadcast from rank 0", [&] {
      torch::NoGradGuard no_grad;
      for (const torch::Tensor& t : tensors) {
        std::vector<torch::Tensor> one = {t.detach().contiguous()};
        group_->broadcast(one)->wait();
        if (one[0].data_ptr() != t.data_ptr()) t.detach().copy_(one[0]);
      }
      return absl::OkStatus();
    });
  }

  absl::Status WaitForAll() override {
    // Point-to-point messages through rank 0 rather than barrier(): Gloo's collectives wait
    // at most the group's timeout, send/recv take their own.
    return Guard(rank(), world_size(), "waiting for the other ranks", [&] {
      const int tag = next_tag_++;
      std::vector<torch::Tensor> token = {torch::zeros({1}, device_)};
      if (!is_root()) {
        group_->send(token, 0, tag)->wait(env_.phase_timeout);
        group_->recv(token, 0, tag)->wait(env_.phase_timeout);
        return absl::OkStatus();
      }
      for (int r = 1; r < world_size(); ++r) group_->recv(token, r, tag)->wait(env_.phase_timeout);
      for (int r = 1; r < world_size(); ++r) group_->send(token, r, tag)->wait(env_.phase_timeout);
      return absl::OkStatus();
    });
  }

 private:
  void AllReduce(torch::Tensor& t) {
    std::vector<torch::Tensor> one = {t};
    group_->allreduce(one)->wait();
  }

  std::unique_ptr<GradientSync> MakeSync(const std::vector<torch::Tensor>& params) {
    return std::make_unique<GradientSync>(params, kBucketBytes, device_, [this](torch::Tensor& t) {
      std::vector<torch::Tensor> one = {t};
      return group_->allreduce(one);
    });
  }

  const DistributedEnv env_;
  const torch::Device device_;
  c10::intrusive_ptr<c10d::Store> store_;  // Kept alive: rank 0's hosts the rendezvous.
  c10::intrusive_ptr<c10d::Backend> group_;
  std::unique_ptr<GradientSync> sync_;  // Armed by BeginGradientSync for the next SumGradients.
  int next_tag_ = 1;
};

}  // namespace

std::vector<size_t> GradientBuckets(const std::vector<torch::Tensor>& params,
                                    int64_t bucket_bytes) {
  std::vector<size_t> starts;
  int64_t bytes = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const int64_t size = params[i].numel() * static_cast<int64_t>(params[i].element_size());
    const bool new_dtype = i > 0 && params[i].scalar_type() != params[i - 1].scalar_type();
    if (i == 0 || new_dtype || bytes + size > bucket_bytes) {
      starts.push_back(i);
      bytes = 0;
    }
    bytes += size;
  }
  starts.push_back(params.size());
  return starts;
}

absl::StatusOr<std::unique_ptr<DataParallelGroup>> ConnectDataParallelGroup(
    const DistributedEnv& env, torch::Device device) {
  std::unique_ptr<DataParallelGroup> group;
  const std::string where = absl::StrCat("rendezvous at ", env.master_addr, ":", env.master_port);
  absl::Status status = Guard(env.rank, env.world_size, where.c_str(), [&] {
    c10d::TCPStoreOptions options;
    options.port = static_cast<uint16_t>(env.master_port);
    options.isServer = env.is_root();
    options.numWorkers = static_cast<size_t>(env.world_size);
    options.waitWorkers = true;
    options.timeout = env.timeout;
    auto store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, options);
    auto backend = MakeBackend(store, env, device);
    group = std::make_unique<C10dGroup>(env, device, std::move(store), std::move(backend));
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return group;
}

}  // namespace lmtrain
