#include "worker/models/internal/dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <mutex>

namespace lmtrain::internal {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr int64_t kGrain = int64_t{1} << 15;

// "lowbias32" from Chris Wellons' hash prospector: a 32-bit bijection with low bias; two rounds
// keyed by the seed's halves decorrelate neighbouring indices and seeds.
inline uint32_t Mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// keep[j] = hash(seed, first + j) < keep_below for j in [0, count), where `first` and
// first + count - 1 share their upper 32 bits. Pure 32-bit integer work that the compiler
// vectorises; target_clones picks the widest vector unit at run time (LibTorch's own kernels
// dispatch the same way), as the portable build targets baseline x86-64 otherwise.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void FillKeepMask(uint64_t seed, uint64_t first, int64_t count, uint32_t keep_below,
                  bool* keep) {
  const auto k0 = static_cast<uint32_t>(seed);
  const uint32_t k1 = static_cast<uint32_t>(seed >> 32) ^ static_cast<uint32_t>(first >> 32);
  const auto low = static_cast<uint32_t>(first);
  for (int64_t j = 0; j < count; ++j) {
    const uint32_t h = Mix(Mix((low + static_cast<uint32_t>(j)) ^ k0) ^ k1);
    keep[j] = h < keep_below;
  }
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

// The keep mask (bool, x's shape) of `seed`, over the flat index of a contiguous tensor.
torch::Tensor KeepMask(const torch::Tensor& x, double p, uint64_t seed) {
  torch::Tensor mask = torch::empty(x.sizes(), x.options().dtype(torch::kBool));
  const uint32_t keep_below = KeepBelow(p);
  bool* out = mask.data_ptr<bool>();
  at::parallel_for(0, mask.numel(), kGrain, [&](int64_t begin, int64_t end) {
    while (begin < end) {  // Pieces that do not cross a multiple of 2^32.
      const auto b = static_cast<uint64_t>(begin);
      const int64_t boundary = static_cast<int64_t>((b | 0xffffffffULL) + 1);
      const int64_t stop = std::min(end, boundary);
      FillKeepMask(seed, b, stop - begin, keep_below, out + begin);
      begin = stop;
    }
  });
  return mask;
}

// 1 / (1 - p) rounded to `dtype`, as torch::dropout's noise tensor holds it.
double ScaleIn(torch::ScalarType dtype, double p) {
  return torch::scalar_tensor(1.0 / (1.0 - p), torch::TensorOptions().dtype(torch::kDouble))
      .to(dtype)
      .item<double>();
}

// x * keep * scale: the kept elements times the dtype-rounded scale, the others 0.
torch::Tensor Masked(const torch::Tensor& x, const torch::Tensor& keep, double scale) {
  return x.mul(keep).mul_(scale);
}

class DropoutFunction : public torch::autograd::Function<DropoutFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, double p) {
    const torch::Tensor keep = KeepMask(x, p, DrawSeed());
    const double scale = ScaleIn(x.scalar_type(), p);
    ctx->save_for_backward({keep});
    ctx->saved_data["scale"] = scale;
    return Masked(x, keep, scale);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const torch::Tensor keep = ctx->get_saved_variables()[0];
    return {Masked(grad_outputs[0], keep, ctx->saved_data["scale"].toDouble()), torch::Tensor()};
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
