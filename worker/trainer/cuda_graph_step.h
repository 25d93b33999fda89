// One training update on a GPU (forward, backward, clip_grad_norm_, AdamW) captured as a CUDA
// graph and replayed (training.cuda_graphs): the host then issues one launch per update
// instead of the few thousand kernel launches that bound a small model's step on a fast GPU.
//
// Run(inputs, loss) copies the inputs into device buffers kept for their shapes. The first
// `warmup` updates of a new set of shapes run eagerly on the capture stream: they are real
// updates, and they build what must exist before a capture (AdamW's moments, cuBLAS's
// workspace). The next update of those shapes is captured, then replayed, and every later one
// is a replay. Eager and replayed updates run the same kernels in the same order, so they
// compute the same values, dropout included (PyTorch's graph-safe Philox offsets). Graphs share
// one memory pool; once `max_graphs` sets of shapes have graphs, updates of other shapes run
// eagerly (a short last batch, for instance).
//
// The update is: loss = loss_fn(device inputs); loss.backward(); the gradient norm and scaling
// of torch.nn.utils.clip_grad_norm_ as PyTorch runs it on CUDA (foreach kernels; max_grad_norm
// <= 0 measures only);
// FusedAdamW::DeviceStep with each group's learning rate as the optimizer holds it at Run.
// Gradients are reset before each update (set to none, as zero_grad) and left in place after it.
//
// Preconditions: the optimizer's parameters are CUDA float32 on one device; loss_fn neither
// synchronises with the host nor copies from host memory (no .item(), nonzero(), to(device) of
// a host tensor: models keep to that on CUDA) and returns a scalar; parameters and optimizer
// state keep their storage between updates (loading a checkpoint into them copies).
// Thread safety: one thread. Errors: c10::Error (the trainer adds the step and batch).
#pragma once

#include <torch/torch.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "worker/optim/fused_adamw.h"

namespace lmtrain {

class CudaGraphStep {
 public:
  using LossFn = std::function<torch::Tensor(const std::vector<torch::Tensor>& inputs)>;

  struct Result {
    double loss = 0;        // loss_fn's value.
    double grad_norm = 0;   // Before clipping.
    bool replayed = false;  // From a graph; false: an eager update (warm-up or past max_graphs).
  };

  // `optimizer` is borrowed and must outlive this object.
  CudaGraphStep(FusedAdamW* optimizer, double max_grad_norm, int warmup = 2, size_t max_graphs = 4);
  ~CudaGraphStep();
  CudaGraphStep(const CudaGraphStep&) = delete;
  CudaGraphStep& operator=(const CudaGraphStep&) = delete;

  // One update on `inputs` (host or device tensors; undefined ones stay undefined), waiting for
  // it to finish. loss_fn receives device tensors of the same shapes and dtypes.
  Result Run(const std::vector<torch::Tensor>& inputs, const LossFn& loss_fn);

  // Sets of input shapes that have a graph.
  size_t graphs() const;
  // Whether this build can capture CUDA graphs (LibTorch with CUDA).
  static bool Supported();

 private:
  struct Shapes;
  struct Capture;
  // Gradients reset, loss, backward, clipping and AdamW; returns [loss, grad norm] (float32).
  torch::Tensor Update(const std::vector<torch::Tensor>& inputs, const LossFn& loss_fn);
  torch::Tensor ClipGradNorm();
  // Each group's learning rate and each parameter's next step into the device tensors that
  // the update reads.
  void LoadOptimizerScalars(const c10::Device& device);

  FusedAdamW* const optimizer_;
  const double max_grad_norm_;
  const int warmup_;
  const size_t max_graphs_;
  std::vector<torch::Tensor> lrs_;  // One float32 scalar per group, on the device.
  torch::Tensor steps_;             // float32 [parameters], on the device.
  std::map<std::string, std::unique_ptr<Shapes>> shapes_;
  std::unique_ptr<Capture> capture_;  // The capture stream and the graphs' memory pool.
};

}  // namespace lmtrain
