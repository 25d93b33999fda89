// The ranks of a data-parallel job as one LibTorch c10d process group: every rank holds a
// full model replica, trains on its share of each global batch (batch_order.h RankShare),
// and the group sums gradients, loss statistics and the stop flag so that all replicas
// take identical optimizer steps.
//
//   Connect(env) : rendezvous through a c10d::TCPStore (rank 0 hosts it at
//   MASTER_ADDR:MASTER_PORT) ─► ProcessGroupGloo (CPU tensors; ProcessGroupNCCL for CUDA
//   tensors where LibTorch was built with it) ─► collectives ... ─► destroyed
//
// Every method is a collective: all ranks must call the same methods in the same order
// with tensors of the same shapes. Errors: Unavailable for anything the group itself fails
// at (a peer lost or hung past the timeout, rendezvous timeout, a transport error): the
// job is worth retrying. The message names the rank and the operation.
// Thread-safety: one thread (the training loop's) uses a group.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/trainer_base/distributed_env.h"

namespace lmtrain {

class DataParallelGroup {
 public:
  virtual ~DataParallelGroup() = default;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  bool is_root() const { return rank() == 0; }

  // Replaces each parameter's gradient by its sum over ranks (an undefined gradient counts
  // as zeros and becomes defined). Gradients are flattened into buckets of about
  // kBucketBytes, one all-reduce per bucket. Callers scale losses so that the sum is the
  // global mean (see Trainer).
  virtual absl::Status SumGradients(const std::vector<torch::Tensor>& params) = 0;

  // Optional, before the backward that completes this step's gradients: the buckets of
  // `params` (the same list the next SumGradients gets) start their all-reduce during that
  // backward as their gradients complete (gradient_sync.h); SumGradients then finishes them.
  // Not with gradient checkpointing. Default: nothing (SumGradients does it all).
  virtual absl::Status BeginGradientSync(const std::vector<torch::Tensor>& /*params*/) {
    return absl::OkStatus();
  }

  // Element-wise sums of `values` over ranks (float64, so counts stay exact).
  virtual absl::StatusOr<std::vector<double>> SumValues(const std::vector<double>& values) = 0;

  // Copies rank 0's values of `tensors` into every rank's (in place).
  virtual absl::Status BroadcastFromRoot(const std::vector<torch::Tensor>& tensors) = 0;

  // A barrier that waits up to the phase timeout (DistributedEnv::phase_timeout), not the
  // per-collective one: for points where ranks arrive after uneven work (rank 0 evaluating
  // or writing a checkpoint, data loading).
  virtual absl::Status WaitForAll() = 0;

  static constexpr int64_t kBucketBytes = 25 << 20;
};

// Joins the process group described by `env` (env.distributed()). Gradients of tensors on
// `device` are reduced there. Errors: Unavailable when the rendezvous or the group's
// connections fail or time out (env.timeout).
absl::StatusOr<std::unique_ptr<DataParallelGroup>> ConnectDataParallelGroup(
    const DistributedEnv& env, torch::Device device = torch::kCPU);

// Splits `params` (in order) into runs whose gradients total at most `bucket_bytes`, each
// with tensors of one dtype; a single larger tensor is a bucket of its own. Returns the
// index of each bucket's first parameter, then params.size().
std::vector<size_t> GradientBuckets(const std::vector<torch::Tensor>& params, int64_t bucket_bytes);

}  // namespace lmtrain
