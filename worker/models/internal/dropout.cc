#include "worker/models/internal/dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <mutex>

namespace lmtrain::internal {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr int64_t kGrain = int64_t{1} << 15;

// "lowbias32" from Chris Wellons' hash prospector: a 32-bit bijection with low bias; two rounds
// keyed by the seed's halves decorrelate neighbouring indices and seeds. 32-bit multiplies
// vectorise on every x86-64 level.
inline uint32_t Mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

inline uint32_t HashOf(uint64_t seed, int64_t index) {
  const auto i = static_cast<uint64_t>(index);
  return Mix(Mix(static_cast<uint32_t>(i) ^ static_cast<uint32_t>(seed)) ^
             static_cast<uint32_t>(seed >> 32) ^ static_cast<uint32_t>(i >> 32));
}

// round((1 - p) * 2^32): an element is kept when its hash is below this. 0 < p < 1.
uint32_t KeepBelow(double p) {
  const double keep = std::ldexp(1.0 - p, 32);
  return keep >= 4294967295.0 ? 4294967295U : static_cast<uint32_t>(std::llround(keep));
}

uint64_t DrawSeed() {
  at::Generator gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return at::check_generator<at::CPUGeneratorImpl>(gen)->random64();
}

// out[i] = keep(i) ? in[i] * scale : 0 over the flat index of a contiguous tensor, with `scale`
// = 1 / (1 - p) rounded to `scale_type` (the dropped input's dtype, as torch's noise tensor).
torch::Tensor ApplyMask(const torch::Tensor& input, double p, uint64_t seed,
                        torch::ScalarType scale_type) {
  const torch::Tensor in = input.contiguous();
  torch::Tensor out = torch::empty_like(in);
  const uint32_t keep_below = KeepBelow(p);
  const int64_t n = in.numel();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, in.scalar_type(), "dropout", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    const double unit = 1.0 / (1.0 - p);
    acc_t scale = static_cast<acc_t>(unit);
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, scale_type, "dropout_scale", [&] {
      scale = static_cast<acc_t>(static_cast<scalar_t>(unit));
    });
    const scalar_t* src = in.data_ptr<scalar_t>();
    scalar_t* dst = out.data_ptr<scalar_t>();
    at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const acc_t kept = static_cast<acc_t>(src[i]) * scale;
        dst[i] = HashOf(seed, i) < keep_below ? static_cast<scalar_t>(kept) : scalar_t(0);
      }
    });
  });
  return out;
}

class DropoutFunction : public torch::autograd::Function<DropoutFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, double p) {
    const uint64_t seed = DrawSeed();
    ctx->saved_data["seed"] = static_cast<int64_t>(seed);
    ctx->saved_data["p"] = p;
    ctx->saved_data["dtype"] = static_cast<int64_t>(x.scalar_type());
    return ApplyMask(x, p, seed, x.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto seed = static_cast<uint64_t>(ctx->saved_data["seed"].toInt());
    const auto dtype = static_cast<torch::ScalarType>(ctx->saved_data["dtype"].toInt());
    return {ApplyMask(grad_outputs[0], ctx->saved_data["p"].toDouble(), seed, dtype),
            torch::Tensor()};
  }
};

}  // namespace

torch::Tensor Dropout(const torch::Tensor& x, double p, bool train) {
  TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  if (!train || p == 0 || x.numel() == 0) return x;
  if (!x.device().is_cpu() || !at::isFloatingType(x.scalar_type())) {
    return torch::dropout(x, p, train);
  }
  if (p == 1) return x * 0;
  return DropoutFunction::apply(x, p);
}

}  // namespace lmtrain::internal
