// Adafactor against a plain double-precision transcription of HF transformers 4.31's formulas,
// save/load resumption, option checks and a tiny regression.
#include "worker/optim/adafactor.h"

#include <torch/serialize.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace lmtrain {
namespace {

// ---- Reference: HF's Adafactor.step for one parameter, element by element, in double. ----

struct RefOptions {
  double lr = 0.0;
  double eps0 = 1e-30;
  double eps1 = 1e-3;
  double clip_threshold = 1.0;
  double decay_rate = -0.8;
  std::optional<double> beta1;
  double weight_decay = 0.0;
  bool scale_parameter = true;
  bool relative_step = true;
  bool warmup_init = false;
};

RefOptions RefFrom(const AdafactorOptions& o) {
  RefOptions r;
  r.lr = o.lr();
  r.eps0 = o.eps_gradient();
  r.eps1 = o.eps_scale();
  r.clip_threshold = o.clip_threshold();
  r.decay_rate = o.decay_rate();
  r.beta1 = o.beta1();
  r.weight_decay = o.weight_decay();
  r.scale_parameter = o.scale_parameter();
  r.relative_step = o.relative_step();
  r.warmup_init = o.warmup_init();
  return r;
}

std::vector<double> ToDoubles(const torch::Tensor& t) {
  torch::Tensor d = t.detach().to(torch::kFloat64).contiguous();
  return std::vector<double>(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
}

class RefParam {
 public:
  explicit RefParam(const torch::Tensor& init) : shape_(init.sizes().vec()), p_(ToDoubles(init)) {
    if (shape_.size() >= 2) {
      cols_ = shape_.back();
      rows_ = shape_[shape_.size() - 2];
      batch_ = static_cast<int64_t>(p_.size()) / (rows_ * cols_);
      row_.assign(batch_ * rows_, 0.0);
      col_.assign(batch_ * cols_, 0.0);
    } else {
      v_.assign(p_.size(), 0.0);
    }
  }

  void Step(const std::vector<double>& g, const RefOptions& o) {
    const size_t n = p_.size();
    step_ += 1;
    const double t = static_cast<double>(step_);
    double sum_sq = 0;
    for (double x : p_) sum_sq += x * x;
    const double rms = std::sqrt(sum_sq / n);
    double step_size = o.lr;
    if (o.relative_step) step_size = std::min(o.warmup_init ? 1e-6 * t : 1e-2, 1.0 / std::sqrt(t));
    const double lr = (o.scale_parameter ? std::max(o.eps1, rms) : 1.0) * step_size;
    const double beta2t = 1.0 - std::pow(t, o.decay_rate);

    std::vector<double> update(n);
    if (!row_.empty()) {
      FactoredUpdate(g, o.eps0, beta2t, &update);
    } else {
      for (size_t i = 0; i < n; ++i) {
        v_[i] = beta2t * v_[i] + (1 - beta2t) * (g[i] * g[i] + o.eps0);
        update[i] = g[i] / std::sqrt(v_[i]);
      }
    }
    double update_sq = 0;
    for (double u : update) update_sq += u * u;
    const double denominator = std::max(1.0, std::sqrt(update_sq / n) / o.clip_threshold);
    for (double& u : update) u = u / denominator * lr;
    if (o.beta1.has_value()) {
      m_.resize(n, 0.0);
      for (size_t i = 0; i < n; ++i) {
        m_[i] = *o.beta1 * m_[i] + (1 - *o.beta1) * update[i];
        update[i] = m_[i];
      }
    }
    for (size_t i = 0; i < n; ++i) {
      if (o.weight_decay != 0) p_[i] -= o.weight_decay * lr * p_[i];
      p_[i] -= update[i];
    }
  }

  const std::vector<double>& p() const { return p_; }

 private:
  // Index of element (b, r, c) in the flat [..., R, C] layout.
  size_t At(int64_t b, int64_t r, int64_t c) const { return (b * rows_ + r) * cols_ + c; }

  void FactoredUpdate(const std::vector<double>& g, double eps0, double beta2t,
                      std::vector<double>* update) {
    for (int64_t b = 0; b < batch_; ++b) {
      for (int64_t r = 0; r < rows_; ++r) {
        double mean = 0;
        for (int64_t c = 0; c < cols_; ++c) mean += g[At(b, r, c)] * g[At(b, r, c)] + eps0;
        row_[b * rows_ + r] = beta2t * row_[b * rows_ + r] + (1 - beta2t) * mean / cols_;
      }
      for (int64_t c = 0; c < cols_; ++c) {
        double mean = 0;
        for (int64_t r = 0; r < rows_; ++r) mean += g[At(b, r, c)] * g[At(b, r, c)] + eps0;
        col_[b * cols_ + c] = beta2t * col_[b * cols_ + c] + (1 - beta2t) * mean / rows_;
      }
      double row_mean = 0;
      for (int64_t r = 0; r < rows_; ++r) row_mean += row_[b * rows_ + r];
      row_mean /= rows_;
      for (int64_t r = 0; r < rows_; ++r) {
        for (int64_t c = 0; c < cols_; ++c) {
          const double r_factor = 1.0 / std::sqrt(row_[b * rows_ + r] / row_mean);
          const double c_factor = 1.0 / std::sqrt(col_[b * cols_ + c]);
          (*update)[At(b, r, c)] = r_factor * c_factor * g[At(b, r, c)];
        }
      }
    }
  }

  std::vector<int64_t> shape_;
  std::vector<double> p_;
  int64_t step_ = 0;
  int64_t batch_ = 0, rows_ = 0, cols_ = 0;
  std::vector<double> row_, col_, v_, m_;
};

// ---- Helpers. ----

const std::vector<std::vector<int64_t>> kShapes = {{7}, {5, 6}, {3, 4, 5}};

std::vector<torch::Tensor> MakeParams(uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<torch::Tensor> params;
  for (const auto& shape : kShapes) params.push_back(torch::randn(shape).requires_grad_(true));
  return params;
}

std::vector<torch::Tensor> CloneParams(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> copies;
  for (const auto& p : params) copies.push_back(p.detach().clone().requires_grad_(true));
  return copies;
}

// Gradients for step `step`, independent of the parameters so both sides see the same ones.
// Scaled per step so the clipping threshold is crossed on some steps and not on others.
std::vector<torch::Tensor> GradsFor(int step) {
  torch::manual_seed(1000 + step);
  std::vector<torch::Tensor> grads;
  for (const auto& shape : kShapes) grads.push_back(torch::randn(shape) * (0.05 + 0.3 * step));
  return grads;
}

void SetGrads(const std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& grads) {
  for (size_t i = 0; i < params.size(); ++i) params[i].mutable_grad() = grads[i].clone();
}

std::unique_ptr<Adafactor> MakeOptimizer(const std::vector<torch::Tensor>& params,
                                         const AdafactorOptions& options) {
  auto optimizer = Adafactor::Create(params, options);
  EXPECT_TRUE(optimizer.ok()) << optimizer.status();
  return optimizer.ok() ? std::move(*optimizer) : nullptr;
}

// Runs `steps` steps of Adafactor and of the reference and compares every parameter: values to
// 1e-6 relative, and the distance travelled (p - p0, the sum of the updates) to 2e-5 of its
// largest element, which checks the updates themselves rather than values they barely move
// (plus float32's rounding of p on each step, which dominates the tiny warmup_init steps).
void ExpectMatchesReference(const AdafactorOptions& options, int steps) {
  std::vector<torch::Tensor> params = MakeParams(7);
  std::vector<RefParam> reference;
  std::vector<std::vector<double>> initial;
  for (const auto& p : params) {
    reference.emplace_back(p);
    initial.push_back(ToDoubles(p));
  }
  auto optimizer = MakeOptimizer(params, options);
  ASSERT_NE(optimizer, nullptr);
  const RefOptions ref_options = RefFrom(options);
  for (int step = 1; step <= steps; ++step) {
    std::vector<torch::Tensor> grads = GradsFor(step);
    SetGrads(params, grads);
    optimizer->step();
    for (size_t i = 0; i < params.size(); ++i) reference[i].Step(ToDoubles(grads[i]), ref_options);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "parameter of rank " << params[i].dim());
    const std::vector<double> got = ToDoubles(params[i]);
    const std::vector<double>& want = reference[i].p();
    double largest_move = 0;
    for (size_t j = 0; j < got.size(); ++j) {
      largest_move = std::max(largest_move, std::abs(want[j] - initial[i][j]));
    }
    ASSERT_GT(largest_move, 0.0);
    for (size_t j = 0; j < got.size(); ++j) {
      EXPECT_NEAR(got[j], want[j], 1e-6 * std::max(1.0, std::abs(want[j]))) << "element " << j;
      const double rounding = steps * 1.2e-7 * std::abs(want[j]);
      EXPECT_NEAR(got[j] - initial[i][j], want[j] - initial[i][j], 2e-5 * largest_move + rounding)
          << "element " << j;
    }
  }
}

// ---- Tests. ----

TEST(AdafactorTest, HfTrainerOptions) {
  const AdafactorOptions options = HfTrainerAdafactorOptions(3e-4);
  EXPECT_EQ(options.lr(), 3e-4);
  EXPECT_FALSE(options.scale_parameter());
  EXPECT_FALSE(options.relative_step());
  EXPECT_FALSE(options.warmup_init());
  EXPECT_EQ(options.eps_gradient(), 1e-30);
  EXPECT_EQ(options.eps_scale(), 1e-3);
  EXPECT_EQ(options.clip_threshold(), 1.0);
  EXPECT_EQ(options.decay_rate(), -0.8);
  EXPECT_FALSE(options.beta1().has_value());
  EXPECT_EQ(options.weight_decay(), 0.0);
  EXPECT_TRUE(ValidateAdafactorOptions(options).ok());
}

TEST(AdafactorTest, DefaultsAreHfs) {
  const AdafactorOptions options;
  EXPECT_EQ(options.lr(), 0.0);
  EXPECT_TRUE(options.scale_parameter());
  EXPECT_TRUE(options.relative_step());
  EXPECT_FALSE(options.warmup_init());
  EXPECT_TRUE(ValidateAdafactorOptions(options).ok());
}

TEST(AdafactorTest, MatchesReferenceWithHfTrainerSettings) {
  ExpectMatchesReference(HfTrainerAdafactorOptions(1e-2), 8);
}

TEST(AdafactorTest, MatchesReferenceWithRelativeStepAndParameterScale) {
  ExpectMatchesReference(AdafactorOptions(), 8);
}

TEST(AdafactorTest, MatchesReferenceWithWarmupInit) {
  ExpectMatchesReference(AdafactorOptions().warmup_init(true), 6);
}

TEST(AdafactorTest, MatchesReferenceWithScaledExternalLr) {
  ExpectMatchesReference(AdafactorOptions(0.05).relative_step(false), 6);
}

TEST(AdafactorTest, MatchesReferenceWithBeta1) {
  ExpectMatchesReference(HfTrainerAdafactorOptions(1e-2).beta1(0.9), 8);
  ExpectMatchesReference(AdafactorOptions().beta1(0.5), 8);
}

TEST(AdafactorTest, MatchesReferenceWithWeightDecay) {
  ExpectMatchesReference(HfTrainerAdafactorOptions(1e-2).weight_decay(0.1), 8);
  ExpectMatchesReference(AdafactorOptions().weight_decay(0.3).beta1(0.9), 8);
}

TEST(AdafactorTest, MatchesReferenceWithTightClipAndOtherDecay) {
  ExpectMatchesReference(
      HfTrainerAdafactorOptions(1e-2).clip_threshold(0.3).decay_rate(-0.5).eps_gradient(1e-20), 6);
}

TEST(AdafactorTest, SchedulerSetsLrPerGroup) {
  std::vector<torch::Tensor> params = MakeParams(3);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(
      std::vector<torch::Tensor>{params[1], params[2]},
      std::make_unique<AdafactorOptions>(HfTrainerAdafactorOptions(1e-2).weight_decay(0.1)));
  groups.emplace_back(std::vector<torch::Tensor>{params[0]},
                      std::make_unique<AdafactorOptions>(HfTrainerAdafactorOptions(1e-2)));
  auto created = Adafactor::Create(std::move(groups), HfTrainerAdafactorOptions(1e-2));
  ASSERT_TRUE(created.ok()) << created.status();
  Adafactor& optimizer = **created;
  std::vector<RefParam> reference(params.begin(), params.end());
  RefOptions decayed = RefFrom(HfTrainerAdafactorOptions(1e-2).weight_decay(0.1));
  RefOptions plain = RefFrom(HfTrainerAdafactorOptions(1e-2));
  for (int step = 1; step <= 5; ++step) {
    const double lr = 1e-2 * step / 5.0;  // A warmup, as a scheduler would set it.
    for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
    EXPECT_EQ(optimizer.param_groups()[0].options().get_lr(), lr);
    decayed.lr = plain.lr = lr;
    std::vector<torch::Tensor> grads = GradsFor(step);
    SetGrads(params, grads);
    optimizer.step();
    reference[0].Step(ToDoubles(grads[0]), plain);
    reference[1].Step(ToDoubles(grads[1]), decayed);
    reference[2].Step(ToDoubles(grads[2]), decayed);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const std::vector<double> got = ToDoubles(params[i]);
    for (size_t j = 0; j < got.size(); ++j) {
      EXPECT_NEAR(got[j], reference[i].p()[j], 1e-6 * std::max(1.0, std::abs(got[j])));
    }
  }
}

TEST(AdafactorTest, KeepsHfStateNames) {
  std::vector<torch::Tensor> params = MakeParams(5);
  auto optimizer = MakeOptimizer(params, HfTrainerAdafactorOptions(1e-3).beta1(0.9));
  SetGrads(params, GradsFor(1));
  optimizer->step();
  optimizer->step();
  ASSERT_EQ(optimizer->state().size(), 3u);
  auto state_of = [&](const torch::Tensor& p) -> const AdafactorParamState& {
    return static_cast<const AdafactorParamState&>(
        *optimizer->state().at(p.unsafeGetTensorImpl()));
  };
  const AdafactorParamState& vector = state_of(params[0]);
  EXPECT_EQ(vector.step(), 2);
  EXPECT_EQ(vector.exp_avg_sq().sizes(), (std::vector<int64_t>{7}));
  EXPECT_FALSE(vector.exp_avg_sq_row().defined());
  EXPECT_EQ(vector.exp_avg().sizes(), (std::vector<int64_t>{7}));
  const AdafactorParamState& cube = state_of(params[2]);
  EXPECT_EQ(cube.exp_avg_sq_row().sizes(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(cube.exp_avg_sq_col().sizes(), (std::vector<int64_t>{3, 5}));
  EXPECT_FALSE(cube.exp_avg_sq().defined());
  EXPECT_GT(cube.rms(), 0.5);  // RMS of N(0, 1) values.
}

TEST(AdafactorTest, SkipsParametersWithoutGradient) {
  std::vector<torch::Tensor> params = MakeParams(5);
  const torch::Tensor before = params[1].detach().clone();
  auto optimizer = MakeOptimizer(params, HfTrainerAdafactorOptions(1e-2));
  std::vector<torch::Tensor> grads = GradsFor(1);
  params[0].mutable_grad() = grads[0];
  optimizer->step();
  EXPECT_TRUE(torch::equal(params[1], before));
  EXPECT_EQ(optimizer->state().size(), 1u);
}

TEST(AdafactorTest, ClosureRunsWithGradAndItsLossIsReturned) {
  torch::Tensor w = torch::ones({3}, torch::requires_grad());
  auto optimizer = MakeOptimizer({w}, HfTrainerAdafactorOptions(1e-2));
  torch::Tensor loss = optimizer->step([&] {
    optimizer->zero_grad();
    torch::Tensor l = (w * w).sum();
    l.backward();
    return l;
  });
  EXPECT_EQ(loss.item<float>(), 3.0f);
  EXPECT_LT(w[0].item<float>(), 1.0f);
}

// torch::save mid-run, torch::load into a fresh optimizer over copies of the parameters, and
// both continue: every value stays bit-identical to the uninterrupted run.
TEST(AdafactorTest, SaveLoadMidRunContinuesBitIdentically) {
  for (const AdafactorOptions& options :
       {HfTrainerAdafactorOptions(1e-2).beta1(0.9).weight_decay(0.1),
        AdafactorOptions().warmup_init(true)}) {
    std::vector<torch::Tensor> params = MakeParams(11);
    auto uninterrupted = MakeOptimizer(params, options);
    for (int step = 1; step <= 3; ++step) {
      SetGrads(params, GradsFor(step));
      uninterrupted->step();
    }
    const std::string path = (std::filesystem::path(::testing::TempDir()) /
                              ("adafactor_" + std::to_string(::getpid()) + ".pt"))
                                 .string();
    torch::save(*uninterrupted, path);
    std::vector<torch::Tensor> resumed_params = CloneParams(params);
    auto resumed = MakeOptimizer(resumed_params, options);
    torch::load(*resumed, path);
    std::filesystem::remove(path);
    ASSERT_EQ(resumed->state().size(), 3u);
    for (int step = 4; step <= 7; ++step) {
      SetGrads(params, GradsFor(step));
      SetGrads(resumed_params, GradsFor(step));
      uninterrupted->step();
      resumed->step();
    }
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_TRUE(torch::equal(params[i], resumed_params[i])) << "parameter " << i;
    }
  }
}

TEST(AdafactorTest, LoadRejectsOtherGroupSizes) {
  std::vector<torch::Tensor> params = MakeParams(2);
  auto optimizer = MakeOptimizer(params, HfTrainerAdafactorOptions(1e-2));
  SetGrads(params, GradsFor(1));
  optimizer->step();
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / "adafactor_sizes.pt").string();
  torch::save(*optimizer, path);
  auto other = MakeOptimizer({params[0]}, HfTrainerAdafactorOptions(1e-2));
  EXPECT_THROW(torch::load(*other, path), c10::Error);
  std::filesystem::remove(path);
}

TEST(AdafactorTest, TrainsATinyRegression) {
  torch::manual_seed(0);
  torch::Tensor x = torch::randn({64, 4});
  torch::Tensor true_w = torch::randn({4, 3});
  torch::Tensor y = torch::matmul(x, true_w) + 0.5;
  torch::Tensor w = torch::zeros({4, 3}, torch::requires_grad());
  torch::Tensor b = torch::zeros({3}, torch::requires_grad());
  auto optimizer = MakeOptimizer({w, b}, HfTrainerAdafactorOptions(5e-2));
  auto loss_now = [&] { return torch::mse_loss(torch::matmul(x, w) + b, y); };
  const double initial = loss_now().item<double>();
  for (int step = 0; step < 200; ++step) {
    optimizer->zero_grad();
    loss_now().backward();
    optimizer->step();
  }
  EXPECT_LT(loss_now().item<double>(), 0.01 * initial);
}

TEST(AdafactorTest, Bf16ParametersAreUpdatedInFloat32AndWrittenBack) {
  torch::manual_seed(4);
  torch::Tensor p32 = torch::randn({6, 5});
  torch::Tensor p16 = p32.to(torch::kBFloat16).requires_grad_(true);
  torch::Tensor reference = p16.detach().to(torch::kFloat32).requires_grad_(true);
  torch::Tensor grad = torch::randn({6, 5});
  p16.mutable_grad() = grad.to(torch::kBFloat16);
  reference.mutable_grad() = grad.to(torch::kBFloat16).to(torch::kFloat32);
  auto low = MakeOptimizer({p16}, HfTrainerAdafactorOptions(1e-1));
  auto high = MakeOptimizer({reference}, HfTrainerAdafactorOptions(1e-1));
  low->step();
  high->step();
  EXPECT_EQ(p16.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(p16, reference.detach().to(torch::kBFloat16)));
}

TEST(AdafactorTest, RejectsBadOptions) {
  struct Case {
    AdafactorOptions options;
    const char* field;
  };
  const std::vector<Case> cases = {
      {AdafactorOptions(1e-3), "lr"},  // Explicit lr with relative_step.
      {HfTrainerAdafactorOptions(-1), "lr"},
      {HfTrainerAdafactorOptions(1e-3).warmup_init(true), "warmup_init"},
      {HfTrainerAdafactorOptions(1e-3).beta1(1.0), "beta1"},
      {HfTrainerAdafactorOptions(1e-3).clip_threshold(0), "clip_threshold"},
      {HfTrainerAdafactorOptions(1e-3).decay_rate(0.5), "decay_rate"},
      {HfTrainerAdafactorOptions(1e-3).weight_decay(-0.1), "weight_decay"},
      {HfTrainerAdafactorOptions(1e-3).eps_scale(-1), "eps_scale"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.field);
    auto optimizer = Adafactor::Create({torch::zeros({2}, torch::requires_grad())}, c.options);
    ASSERT_FALSE(optimizer.ok());
    EXPECT_EQ(optimizer.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(optimizer.status().message().find(c.field), std::string::npos) << optimizer.status();
  }
}

TEST(AdafactorTest, RejectsBadGroupOptions) {
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<torch::Tensor>{torch::zeros({2}, torch::requires_grad())},
                      std::make_unique<AdafactorOptions>(HfTrainerAdafactorOptions(1e-3).beta1(2)));
  auto optimizer = Adafactor::Create(std::move(groups), HfTrainerAdafactorOptions(1e-3));
  ASSERT_FALSE(optimizer.ok());
  EXPECT_NE(optimizer.status().message().find("parameter group 0"), std::string::npos);

  std::vector<torch::optim::OptimizerParamGroup> adam_groups;
  adam_groups.emplace_back(std::vector<torch::Tensor>{torch::zeros({2}, torch::requires_grad())},
                           std::make_unique<torch::optim::AdamOptions>(1e-3));
  EXPECT_FALSE(Adafactor::Create(std::move(adam_groups), HfTrainerAdafactorOptions(1e-3)).ok());
}

}  // namespace
}  // namespace lmtrain
