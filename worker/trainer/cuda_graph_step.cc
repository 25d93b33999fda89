#include "worker/trainer/cuda_graph_step.h"

#include <ATen/autocast_mode.h>

#include <sstream>

#ifdef LMTRAIN_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace lmtrain {
namespace {

// The shapes and dtypes of `inputs`: the key of their graph.
std::string KeyOf(const std::vector<torch::Tensor>& inputs) {
  std::ostringstream key;
  for (const torch::Tensor& t : inputs) {
    if (t.defined()) {
      key << t.sizes() << c10::toString(t.scalar_type()) << ";";
    } else {
      key << "-;";
    }
  }
  return key.str();
}

}  // namespace

#ifdef LMTRAIN_WITH_CUDA

struct CudaGraphStep::Capture {
  c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool();
  at::cuda::MempoolId_t pool{0, 0};  // The first graph's; {0, 0} until then.
};

struct CudaGraphStep::Shapes {
  std::vector<torch::Tensor> inputs;  // Device buffers the graph reads.
  int updates = 0;
  std::unique_ptr<at::cuda::CUDAGraph> graph;
  torch::Tensor result;  // The graph's [loss, grad norm].
};

bool CudaGraphStep::Supported() { return true; }

#else

struct CudaGraphStep::Capture {};
struct CudaGraphStep::Shapes {};
bool CudaGraphStep::Supported() { return false; }

#endif

CudaGraphStep::CudaGraphStep(FusedAdamW* optimizer, double max_grad_norm, int warmup,
                             size_t max_graphs)
    : optimizer_(optimizer),
      max_grad_norm_(max_grad_norm),
      warmup_(std::max(warmup, 1)),
      max_graphs_(max_graphs) {}

CudaGraphStep::~CudaGraphStep() = default;

size_t CudaGraphStep::graphs() const {
#ifdef LMTRAIN_WITH_CUDA
  size_t n = 0;
  for (const auto& [key, shapes] : shapes_) n += shapes->graph != nullptr ? 1 : 0;
  return n;
#else
  return 0;
#endif
}

void CudaGraphStep::LoadOptimizerScalars(const c10::Device& device) {
  const auto& groups = optimizer_->param_groups();
  if (lrs_.size() != groups.size()) {
    lrs_.clear();
    for (size_t g = 0; g < groups.size(); ++g) {
      lrs_.push_back(
          torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(device)));
    }
  }
  for (size_t g = 0; g < groups.size(); ++g) lrs_[g].fill_(groups[g].options().get_lr());
  const std::vector<float> next = optimizer_->NextSteps();
  const torch::Tensor host = torch::tensor(next, torch::kFloat32).pin_memory();
  if (!steps_.defined() || steps_.numel() != host.numel()) {
    steps_ = torch::empty({host.numel()}, host.options().device(device).pinned_memory(false));
  }
  steps_.copy_(host, /*non_blocking=*/true);
}

torch::Tensor CudaGraphStep::ClipGradNorm() {
  // torch.nn.utils.clip_grad_norm_ as PyTorch runs it on CUDA (foreach kernels), without the
  // host read: total = ||(||g_i||)||, g *= min(max_norm / (total + 1e-6), 1).
  std::vector<torch::Tensor> grads;
  for (const auto& group : optimizer_->param_groups()) {
    for (const torch::Tensor& p : group.params()) {
      if (p.grad().defined()) grads.push_back(p.grad());
    }
  }
  TORCH_CHECK(!grads.empty(), "no parameter received a gradient");
  const std::vector<torch::Tensor> norms = at::_foreach_norm(grads, 2.0);
  torch::Tensor total = torch::stack(norms).norm(2.0);
  if (max_grad_norm_ > 0) {
    at::_foreach_mul_(grads, torch::clamp(max_grad_norm_ / (total + 1e-6), std::nullopt, 1.0));
  }
  return total;
}

torch::Tensor CudaGraphStep::Update(const std::vector<torch::Tensor>& inputs,
                                    const LossFn& loss_fn) {
  for (auto& group : optimizer_->param_groups()) {
    for (torch::Tensor& p : group.params()) p.mutable_grad() = torch::Tensor();
  }
  torch::Tensor loss = loss_fn(inputs);
  TORCH_CHECK(loss.numel() == 1, "the loss must be a scalar, got shape ", loss.sizes());
  loss.backward();
  torch::NoGradGuard no_grad;
  torch::Tensor norm = ClipGradNorm();
  optimizer_->DeviceStep(lrs_, steps_);
  return torch::stack({loss.detach().to(torch::kFloat32).reshape({}), norm.to(torch::kFloat32)});
}

#ifdef LMTRAIN_WITH_CUDA

CudaGraphStep::Result CudaGraphStep::Run(const std::vector<torch::Tensor>& inputs,
                                         const LossFn& loss_fn) {
  const auto& groups = optimizer_->param_groups();
  TORCH_CHECK(!groups.empty() && !groups[0].params().empty(), "the optimizer has no parameters");
  const c10::Device device = groups[0].params()[0].device();
  TORCH_CHECK(device.is_cuda(), "CUDA graphs need the model on a CUDA device, not ", device);
  if (capture_ == nullptr) {
    c10::cuda::CUDAGuard device_guard(device);
    capture_ = std::make_unique<Capture>();
  }
  const std::string key = KeyOf(inputs);
  auto found = shapes_.find(key);
  std::unique_ptr<Shapes> passing;  // Shapes past max_graphs: buffers for this update only.
  Shapes* shapes = nullptr;
  if (found != shapes_.end()) {
    shapes = found->second.get();
  } else if (shapes_.size() < max_graphs_) {
    shapes = shapes_.emplace(key, std::make_unique<Shapes>()).first->second.get();
  } else {
    passing = std::make_unique<Shapes>();
    shapes = passing.get();
  }
  // The capture stream starts after whatever the caller queued and the caller's stream
  // continues after the update.
  const c10::cuda::CUDAStream caller = c10::cuda::getCurrentCUDAStream(device.index());
  at::cuda::CUDAEvent queued;
  queued.record(caller);
  queued.block(capture_->stream);
  Result result;
  torch::Tensor values;
  {
    c10::cuda::CUDAStreamGuard stream_guard(capture_->stream);
    if (shapes->inputs.empty()) {
      for (const torch::Tensor& t : inputs) {
        shapes->inputs.push_back(
            t.defined() ? torch::empty_like(t, t.options().device(device).pinned_memory(false))
                        : torch::Tensor());
      }
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].defined()) continue;
      const torch::Tensor source = inputs[i].is_cpu() ? inputs[i].pin_memory() : inputs[i];
      shapes->inputs[i].copy_(source, /*non_blocking=*/true);
    }
    LoadOptimizerScalars(device);
    if (shapes->graph != nullptr) {
      shapes->graph->replay();
      values = shapes->result;
      result.replayed = true;
    } else if (shapes->updates < warmup_ || passing != nullptr) {
      values = Update(shapes->inputs, loss_fn);
    } else {
      // Gradients come from the graph's pool: none may survive from an eager update.
      for (auto& group : optimizer_->param_groups()) {
        for (torch::Tensor& p : group.params()) p.mutable_grad() = torch::Tensor();
      }
      auto graph = std::make_unique<at::cuda::CUDAGraph>();
      graph->capture_begin(capture_->pool);
      shapes->result = Update(shapes->inputs, loss_fn);
      graph->capture_end();
      if (capture_->pool == at::cuda::MempoolId_t{0, 0}) capture_->pool = graph->pool();
      at::autocast::clear_cache();  // Casts cached while capturing belong to the graph.
      graph->replay();
      shapes->graph = std::move(graph);
      values = shapes->result;
      result.replayed = true;
    }
    ++shapes->updates;
  }
  at::cuda::CUDAEvent done;
  done.record(capture_->stream);
  done.block(caller);
  const torch::Tensor host = values.to(torch::kCPU);  // Waits for the update.
  optimizer_->AdvanceSteps();
  result.loss = host[0].item<double>();
  result.grad_norm = host[1].item<double>();
  return result;
}

#else

CudaGraphStep::Result CudaGraphStep::Run(const std::vector<torch::Tensor>&, const LossFn&) {
  TORCH_CHECK(false, "CUDA graphs: this lm-train was built against a LibTorch without CUDA");
}

#endif

}  // namespace lmtrain
