#include "worker/models/internal/linear_cross_entropy.h"

#include <ATen/autocast_mode.h>

#include <algorithm>
#include <cmath>

namespace lmtrain::internal {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Turns CPU autocast off for the explicit dtypes below; restores it on exit.
class AutocastOff {
 public:
  AutocastOff() : enabled_(at::autocast::is_autocast_enabled(at::kCPU)) {
    at::autocast::set_autocast_enabled(at::kCPU, false);
  }
  ~AutocastOff() { at::autocast::set_autocast_enabled(at::kCPU, enabled_); }
  AutocastOff(const AutocastOff&) = delete;
  AutocastOff& operator=(const AutocastOff&) = delete;

 private:
  bool enabled_;
};

struct Result {
  torch::Tensor loss;
  torch::Tensor grad_hidden, grad_weight, grad_bias;  // Defined when asked for.
};

// Reused per-chunk buffers: fresh 32 MB allocations would page-fault on every chunk.
struct Scratch {
  torch::Tensor logits;  // [chunk, V] in the matmul dtype.
  torch::Tensor wide;    // [chunk, V] fp32 copy of bf16 logits (bf16 only).
  torch::Tensor logp;    // [chunk, V] log-softmax, then the gradient.
};

// The matmul operands in `dtype` (bf16 under autocast, else as given).
struct Operands {
  torch::Tensor x, w, b;
};

void LogSoftmaxChunk(const Operands& op, int64_t start, int64_t n, Scratch& s) {
  torch::Tensor logits = s.logits.narrow(0, 0, n);
  torch::Tensor xs = op.x.narrow(0, start, n);
  if (op.b.defined()) {
    at::addmm_out(logits, op.b, xs, op.w.t());
  } else {
    at::mm_out(logits, xs, op.w.t());
  }
  torch::Tensor input = logits;
  if (s.wide.defined()) input = s.wide.narrow(0, 0, n).copy_(logits);
  torch::Tensor logp = s.logp.narrow(0, 0, n);
  at::_log_softmax_out(logp, input, 1, false);
}

// Turns the chunk's log-softmax into d(mean loss)/d(logits) = (softmax - one_hot) / rows and
// feeds it to the three gradients.
void BackwardChunk(const Operands& op, const torch::Tensor& targets, int64_t start, int64_t n,
                   double scale, Scratch& s, Result& r) {
  torch::Tensor g = s.logp.narrow(0, 0, n).add_(std::log(scale)).exp_();
  g.scatter_add_(1, targets.unsqueeze(1), torch::full({n, 1}, -scale, g.options()));
  torch::Tensor gc = g.to(op.w.scalar_type());
  torch::Tensor xs = op.x.narrow(0, start, n);
  r.grad_hidden.narrow(0, start, n).copy_(torch::mm(gc, op.w));
  if (r.grad_weight.scalar_type() == gc.scalar_type()) {
    r.grad_weight.addmm_(gc.t(), xs);
  } else {
    r.grad_weight.add_(torch::mm(gc.t(), xs));
  }
  if (r.grad_bias.defined()) r.grad_bias.add_(g.sum(0));
}

Result Compute(const torch::Tensor& hidden, const torch::Tensor& weight, const torch::Tensor& bias,
               const torch::Tensor& targets, bool bf16, bool with_grads) {
  AutocastOff autocast_off;
  const int64_t rows = hidden.size(0), vocab = weight.size(0);
  const torch::ScalarType dtype = bf16 ? torch::kBFloat16 : hidden.scalar_type();
  const torch::ScalarType wide = bf16 ? torch::kFloat32 : dtype;
  Operands op{hidden.to(dtype), weight.to(dtype), bias.defined() ? bias.to(dtype) : bias};
  const int64_t chunk = std::clamp<int64_t>(kChunkElements / std::max<int64_t>(vocab, 1), 1,
                                            std::max<int64_t>(rows, 1));
  Scratch s;
  s.logits = torch::empty({chunk, vocab}, hidden.options().dtype(dtype));
  if (bf16) s.wide = torch::empty({chunk, vocab}, hidden.options().dtype(wide));
  s.logp = torch::empty({chunk, vocab}, hidden.options().dtype(wide));
  Result r;
  if (with_grads) {
    r.grad_hidden = torch::empty_like(hidden);
    r.grad_weight = torch::zeros_like(weight);
    if (bias.defined()) r.grad_bias = torch::zeros_like(bias);
  }
  torch::Tensor total = torch::zeros({}, hidden.options().dtype(wide));
  const double scale = 1.0 / static_cast<double>(rows);
  for (int64_t start = 0; start < rows; start += chunk) {
    const int64_t n = std::min(chunk, rows - start);
    torch::Tensor t = targets.narrow(0, start, n);
    LogSoftmaxChunk(op, start, n, s);
    total.sub_(s.logp.narrow(0, 0, n).gather(1, t.unsqueeze(1)).sum());
    if (with_grads) BackwardChunk(op, t, start, n, scale, s, r);
  }
  r.loss = total.div_(static_cast<double>(rows));
  return r;
}

class LinearCrossEntropyFunction : public torch::autograd::Function<LinearCrossEntropyFunction> {
 public:
  // Runs with grad disabled (Function::apply's doing). apply() takes no undefined tensor, so
  // "no bias" arrives as an empty one.
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& hidden,
                               const torch::Tensor& weight, const torch::Tensor& bias,
                               const torch::Tensor& targets, bool bf16) {
    const torch::Tensor b = bias.numel() > 0 ? bias : torch::Tensor();
    Result r = Compute(hidden, weight, b, targets, bf16, /*with_grads=*/true);
    ctx->save_for_backward({r.grad_hidden, r.grad_weight, r.grad_bias});
    return r.loss;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor& g = grad_outputs[0];
    const bool unit = g.numel() == 1 && g.item<double>() == 1.0;  // The usual loss.backward().
    auto scaled = [&](const torch::Tensor& grad) {
      return !grad.defined() || unit ? grad : grad * g.to(grad.scalar_type());
    };
    return {scaled(saved[0]), scaled(saved[1]), scaled(saved[2]), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor LinearCrossEntropy(const torch::Tensor& hidden, const torch::Tensor& weight,
                                 const torch::Tensor& bias, const torch::Tensor& targets) {
  TORCH_CHECK(hidden.dim() == 2 && weight.dim() == 2 && hidden.size(1) == weight.size(1),
              "LinearCrossEntropy: hidden ", hidden.sizes(), " and weight ", weight.sizes(),
              " do not fit");
  TORCH_CHECK(targets.dim() == 1 && targets.size(0) == hidden.size(0),
              "LinearCrossEntropy: targets ", targets.sizes(), " for hidden ", hidden.sizes());
  const bool bf16 = at::autocast::is_autocast_enabled(at::kCPU) &&
                    at::autocast::get_autocast_dtype(at::kCPU) == at::kBFloat16 &&
                    hidden.device().is_cpu();
  if (hidden.size(0) == 0 || !hidden.device().is_cpu()) {
    // No rows: the mean is NaN, as torch's. Off the CPU: the plain pair.
    return torch::cross_entropy_loss(torch::linear(hidden, weight, bias), targets);
  }
  const bool needs_grad =
      torch::GradMode::is_enabled() && (hidden.requires_grad() || weight.requires_grad() ||
                                        (bias.defined() && bias.requires_grad()));
  if (!needs_grad) return Compute(hidden, weight, bias, targets, bf16, false).loss;
  return LinearCrossEntropyFunction::apply(
      hidden, weight, bias.defined() ? bias : torch::empty({0}, weight.options()), targets, bf16);
}

}  // namespace lmtrain::internal
