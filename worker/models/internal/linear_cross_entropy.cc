#include "worker/models/internal/linear_cross_entropy.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>

#include <algorithm>
#include <cmath>

#include "worker/models/internal/cross_entropy_rows.h"

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

// Buffers reused across chunks and groups: fresh allocations of this size page-fault (and are
// zeroed by the kernel) every time.
struct Scratch {
  torch::Tensor logits;       // [chunk, V] in the matmul dtype.
  torch::Tensor wide;         // [chunk, V] fp32 copy of bf16 logits (bf16 only).
  torch::Tensor logp;         // [chunk, V] log-softmax, then its gradient (unless in `grads`).
  torch::Tensor grads;        // [group, V] the logits' gradient in the matmul dtype.
  torch::Tensor weight_grad;  // [V, E] a group's bf16 weight gradient (bf16 only).
  torch::Tensor weight_wide;  // [V, E] its fp32 copy, from the second group on (bf16 only).
};

// The matmul operands in `dtype` (bf16 under autocast, else as given).
struct Operands {
  torch::Tensor x, w, b;
};

// Adds the column sums of a chunk's logits gradient `dst` (in the matmul dtype) to the bias
// gradient, summed in the bias gradient's dtype.
void AddColumnSums(const torch::Tensor& dst, Result& r) {
  if (r.grad_bias.defined()) r.grad_bias.add_(at::sum(dst, {0}, false, r.grad_bias.scalar_type()));
}

// Rows [start, start + n)'s logits, in Scratch::logits.
torch::Tensor ChunkLogits(const Operands& op, int64_t start, int64_t n, Scratch& s) {
  torch::Tensor logits = s.logits.narrow(0, 0, n);
  torch::Tensor xs = op.x.narrow(0, start, n);
  if (op.b.defined()) {
    at::addmm_out(logits, op.b, xs, op.w.t());
  } else {
    at::mm_out(logits, xs, op.w.t());
  }
  return logits;
}

// Writes the log-softmax of rows [start, start + n)'s logits into `logp`.
void LogSoftmaxChunk(const Operands& op, int64_t start, int64_t n, Scratch& s, torch::Tensor logp) {
  torch::Tensor input = ChunkLogits(op, start, n, s);
  if (s.wide.defined()) input = s.wide.narrow(0, 0, n).copy_(input);
  at::_log_softmax_out(logp, input, 1, false);
}

RowFloat RowFloatOf(const torch::Tensor& t) {
  return t.scalar_type() == torch::kBFloat16 ? RowFloat::kBFloat16 : RowFloat::kFloat32;
}

// Subtracts a chunk's log-likelihood from `total`: each row's (1 - s) * log p[target] plus
// s * the mean over classes of log p.
void SubtractChunkLoss(const torch::Tensor& logp, const torch::Tensor& targets, double smoothing,
                       torch::Tensor& total) {
  torch::Tensor picked = logp.gather(1, targets.unsqueeze(1)).sum();
  if (smoothing == 0) {
    total.sub_(picked);
    return;
  }
  total.sub_(picked.mul(1 - smoothing))
      .sub_(logp.sum().mul(smoothing / static_cast<double>(logp.size(1))));
}

// One sweep per row (cross_entropy_rows.h): each row's loss into `row_loss` and, when `dst` is
// defined, d(mean loss)/d(logits) into it in the matmul dtype, its column sums added to the bias
// gradient.
void FusedChunk(const torch::Tensor& logits, const torch::Tensor& targets, double scale,
                double smoothing, const torch::Tensor& dst, const torch::Tensor& row_loss,
                Result& r) {
  CrossEntropyRowsArgs args;
  args.logits = logits.data_ptr();
  args.in = RowFloatOf(logits);
  args.vocab = logits.size(1);
  args.targets = targets.data_ptr<int64_t>();
  args.scale = static_cast<float>(scale);
  args.smoothing = static_cast<float>(smoothing);
  args.loss = row_loss.data_ptr<float>();
  if (dst.defined()) {
    args.grad = dst.data_ptr();
    args.out = RowFloatOf(dst);
  }
  at::parallel_for(0, logits.size(0), 1,
                   [&](int64_t begin, int64_t end) { CrossEntropyRows(args, begin, end); });
  if (dst.defined()) AddColumnSums(dst, r);
}

// Turns a chunk's log-softmax (in place) into d(mean loss)/d(logits) =
// (softmax - (1 - s) * one_hot - s / V) * scale, adds its column sums to the bias gradient and
// leaves it in `dst` (the group's rows of Scratch::grads) in the matmul dtype.
void ChunkGradient(const torch::Tensor& logp, const torch::Tensor& targets, double scale,
                   double smoothing, const torch::Tensor& dst, Result& r) {
  torch::Tensor g = logp.add_(std::log(scale)).exp_();
  if (smoothing > 0) g.sub_(smoothing * scale / static_cast<double>(g.size(1)));
  g.scatter_add_(1, targets.unsqueeze(1),
                 torch::full({g.size(0), 1}, -(1 - smoothing) * scale, g.options()));
  if (!dst.is_same(g)) dst.copy_(g);
  AddColumnSums(dst, r);
}

// Feeds a group's logits gradient (rows [start, start + n)) to the hidden and weight
// gradients: one pair of large matmuls per group instead of one per chunk.
void GroupMatmuls(const Operands& op, int64_t start, int64_t n, bool first, Scratch& s,
                  Result& r) {
  torch::Tensor gc = s.grads.narrow(0, 0, n);
  torch::Tensor xs = op.x.narrow(0, start, n);
  torch::Tensor gh = r.grad_hidden.narrow(0, start, n);
  if (gh.scalar_type() == gc.scalar_type()) {
    at::mm_out(gh, gc, op.w);
  } else {
    gh.copy_(torch::mm(gc, op.w));
  }
  if (r.grad_weight.scalar_type() == gc.scalar_type()) {
    if (first) {
      at::mm_out(r.grad_weight, gc.t(), xs);
    } else {
      r.grad_weight.addmm_(gc.t(), xs);
    }
    return;
  }
  if (!s.weight_grad.defined()) s.weight_grad = torch::empty(op.w.sizes(), op.w.options());
  at::mm_out(s.weight_grad, gc.t(), xs);
  if (first) {
    r.grad_weight.copy_(s.weight_grad);
    return;
  }
  if (!s.weight_wide.defined()) s.weight_wide = torch::empty_like(r.grad_weight);
  r.grad_weight.add_(s.weight_wide.copy_(s.weight_grad));
}

// Rows per chunk and per group for `rows` rows of `vocab` logits of `element_bytes` each.
struct Blocking {
  int64_t chunk, group;
};

Blocking BlockingFor(int64_t rows, int64_t vocab, int64_t element_bytes,
                     const LinearCrossEntropyOptions& options) {
  const int64_t v = std::max<int64_t>(vocab, 1), r = std::max<int64_t>(rows, 1);
  const int64_t chunk = std::clamp<int64_t>(options.chunk_elements / v, 1, r);
  const int64_t per_group = options.group_bytes / (v * element_bytes) / chunk * chunk;
  return {chunk, std::min(std::max(per_group, chunk), r)};
}

// The per-row sweep serves fp32 and bf16 logits on CPUs that have it.
bool UsesRowSweep(torch::ScalarType dtype, const LinearCrossEntropyOptions& options) {
  return options.row_sweep && (dtype == torch::kFloat32 || dtype == torch::kBFloat16) &&
         CrossEntropyRowsAvailable();
}

// The sweep reads targets[i] as a column index: out-of-range ones must not reach it.
void CheckTargets(const torch::Tensor& targets, int64_t vocab) {
  const int64_t low = targets.min().item<int64_t>(), high = targets.max().item<int64_t>();
  TORCH_CHECK(low >= 0 && high < vocab, "LinearCrossEntropy: target ", low < 0 ? low : high,
              " is out of bounds for ", vocab, " classes");
}

// Chunk buffers of the matmul dtype `dtype`, and, off the sweep, of the softmax dtype `wide`.
Scratch MakeScratch(const Blocking& b, int64_t vocab, bool with_grads, bool sweep,
                    const torch::TensorOptions& options, torch::ScalarType dtype,
                    torch::ScalarType wide) {
  Scratch s;
  s.logits = torch::empty({b.chunk, vocab}, options.dtype(dtype));
  if (with_grads) s.grads = torch::empty({b.group, vocab}, options.dtype(dtype));
  if (sweep) return s;
  const bool widened = dtype != wide;
  if (widened) s.wide = torch::empty({b.chunk, vocab}, options.dtype(wide));
  // Otherwise, with gradients, the log-softmax is computed in place in Scratch::grads.
  if (!with_grads || widened) s.logp = torch::empty({b.chunk, vocab}, options.dtype(wide));
  return s;
}

Result Compute(const torch::Tensor& hidden, const torch::Tensor& weight, const torch::Tensor& bias,
               const torch::Tensor& targets, bool bf16, bool with_grads,
               const LinearCrossEntropyOptions& options) {
  AutocastOff autocast_off;
  const int64_t rows = hidden.size(0), vocab = weight.size(0);
  const torch::ScalarType dtype = bf16 ? torch::kBFloat16 : hidden.scalar_type();
  const torch::ScalarType wide = bf16 ? torch::kFloat32 : dtype;
  const bool sweep = UsesRowSweep(dtype, options);
  const torch::Tensor ids = targets.to(torch::kLong).contiguous();
  if (sweep) CheckTargets(ids, vocab);
  Operands op{hidden.to(dtype), weight.to(dtype), bias.defined() ? bias.to(dtype) : bias};
  const Blocking b = BlockingFor(rows, vocab, c10::elementSize(dtype), options);
  Scratch s = MakeScratch(b, vocab, with_grads, sweep, hidden.options(), dtype, wide);
  Result r;
  if (with_grads) {
    r.grad_hidden = torch::empty_like(hidden);
    r.grad_weight = torch::empty_like(weight);
    if (bias.defined()) r.grad_bias = torch::zeros_like(bias);
  }
  torch::Tensor total = torch::zeros({}, hidden.options().dtype(wide));
  torch::Tensor row_loss =
      sweep ? torch::empty({rows}, hidden.options().dtype(torch::kFloat32)) : torch::Tensor();
  const double scale = 1.0 / static_cast<double>(rows);
  const double smoothing = options.label_smoothing;
  for (int64_t group = 0; group < rows; group += b.group) {
    const int64_t group_rows = std::min(b.group, rows - group);
    for (int64_t start = group; start < group + group_rows; start += b.chunk) {
      const int64_t n = std::min(b.chunk, group + group_rows - start);
      torch::Tensor t = ids.narrow(0, start, n);
      torch::Tensor in_group = with_grads ? s.grads.narrow(0, start - group, n) : torch::Tensor();
      if (sweep) {
        FusedChunk(ChunkLogits(op, start, n, s), t, scale, smoothing, in_group,
                   row_loss.narrow(0, start, n), r);
        continue;
      }
      torch::Tensor logp = s.logp.defined() ? s.logp.narrow(0, 0, n) : in_group;
      LogSoftmaxChunk(op, start, n, s, logp);
      SubtractChunkLoss(logp, t, smoothing, total);
      if (with_grads) ChunkGradient(logp, t, scale, smoothing, in_group, r);
    }
    if (with_grads) GroupMatmuls(op, group, group_rows, group == 0, s, r);
  }
  if (sweep) total = row_loss.sum().to(wide);
  r.loss = total.div_(static_cast<double>(rows));
  return r;
}

class LinearCrossEntropyFunction : public torch::autograd::Function<LinearCrossEntropyFunction> {
 public:
  // Runs with grad disabled (Function::apply's doing). apply() takes no undefined tensor, so
  // "no bias" arrives as an empty one.
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& hidden,
                               const torch::Tensor& weight, const torch::Tensor& bias,
                               const torch::Tensor& targets, bool bf16, int64_t chunk_elements,
                               int64_t group_bytes, bool row_sweep, double label_smoothing) {
    const torch::Tensor b = bias.numel() > 0 ? bias : torch::Tensor();
    Result r = Compute(hidden, weight, b, targets, bf16, /*with_grads=*/true,
                       {chunk_elements, group_bytes, row_sweep, label_smoothing});
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
    return {scaled(saved[0]), scaled(saved[1]), scaled(saved[2]), torch::Tensor(), torch::Tensor(),
            torch::Tensor(),  torch::Tensor(),  torch::Tensor(),  torch::Tensor()};
  }
};

}  // namespace

torch::Tensor LinearCrossEntropy(const torch::Tensor& hidden, const torch::Tensor& weight,
                                 const torch::Tensor& bias, const torch::Tensor& targets,
                                 const LinearCrossEntropyOptions& options) {
  TORCH_CHECK(options.chunk_elements > 0 && options.group_bytes > 0,
              "LinearCrossEntropy: chunk and group sizes must be positive");
  TORCH_CHECK(options.label_smoothing >= 0 && options.label_smoothing <= 1,
              "LinearCrossEntropy: label_smoothing ", options.label_smoothing, " is not in [0, 1]");
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
    return torch::cross_entropy_loss(torch::linear(hidden, weight, bias), targets, {},
                                     at::Reduction::Mean, -100, options.label_smoothing);
  }
  const bool needs_grad =
      torch::GradMode::is_enabled() && (hidden.requires_grad() || weight.requires_grad() ||
                                        (bias.defined() && bias.requires_grad()));
  if (!needs_grad) return Compute(hidden, weight, bias, targets, bf16, false, options).loss;
  return LinearCrossEntropyFunction::apply(
      hidden, weight, bias.defined() ? bias : torch::empty({0}, weight.options()), targets, bf16,
      options.chunk_elements, options.group_bytes, options.row_sweep, options.label_smoothing);
}

}  // namespace lmtrain::internal
