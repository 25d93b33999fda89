// lm-bench-train: full training steps (forward, backward, AdamW) of real-shaped models with
// random weights and tokens, to compare with Hugging Face's Trainer on the same machine.
//
//   lm-bench-train --model bert-base|gpt2-small|gpt2-tiny --batch B --seq T
//                  [--precision fp32|bf16] [--steps N] [--warmup W] [--threads K]
//                  [--optimizer fused|torch] [--device cpu|cuda] [--profile TRACE.json]
//
// Prints each step's time, then tokens/s and achieved GFLOP/s (6·params·tokens for the dense
// layers, the MLM/LM decoder only on the positions that have a label, plus 12·L·B·T²·H for
// attention) against a measured matmul ceiling of the same precision; the last line is JSON.
// bf16 runs under autocast on the device (as HF's --bf16), the cast cache cleared after each
// step. --device cuda moves the model and batch to the GPU and waits for it at the end of each
// step (AdamW as one fused multi-tensor kernel there). --profile records the last timed step
// with LibTorch's profiler and writes it as a Chrome trace (chrome://tracing, Perfetto).
#include <ATen/autocast_mode.h>
#include <torch/cuda.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "common/malloc_tuning.h"
#include "worker/models/pretrained_model.h"
#include "worker/optim/fused_adamw.h"

namespace lmtrain {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string model = "gpt2-tiny";
  int64_t batch = 8;
  int64_t seq = 128;
  std::string precision = "fp32";
  int64_t steps = 5;
  int64_t warmup = 1;
  int64_t threads = 0;              // 0: hardware cores.
  std::string optimizer = "fused";  // fused (lm-train's) | torch (torch::optim::AdamW).
  std::string device = "cpu";       // cpu | cuda
  std::string profile;              // A Chrome trace of the last timed step; "": none.
};

// The command line is this table.
using Setter = std::function<bool(Options&, const std::string&)>;
const std::map<std::string, Setter>& Flags() {
  static const auto* flags = new std::map<std::string, Setter>{
      {"--model",
       [](Options& o, const std::string& v) {
         o.model = v;
         return true;
       }},
      {"--batch",
       [](Options& o, const std::string& v) {
         o.batch = std::stoll(v);
         return true;
       }},
      {"--seq",
       [](Options& o, const std::string& v) {
         o.seq = std::stoll(v);
         return true;
       }},
      {"--precision",
       [](Options& o, const std::string& v) {
         o.precision = v;
         return v == "fp32" || v == "bf16";
       }},
      {"--steps",
       [](Options& o, const std::string& v) {
         o.steps = std::stoll(v);
         return true;
       }},
      {"--warmup",
       [](Options& o, const std::string& v) {
         o.warmup = std::stoll(v);
         return true;
       }},
      {"--optimizer",
       [](Options& o, const std::string& v) {
         o.optimizer = v;
         return v == "fused" || v == "torch";
       }},
      {"--threads",
       [](Options& o, const std::string& v) {
         o.threads = std::stoll(v);
         return true;
       }},
      {"--device",
       [](Options& o, const std::string& v) {
         o.device = v;
         return v == "cpu" || v == "cuda";
       }},
      {"--profile",
       [](Options& o, const std::string& v) {
         o.profile = v;
         return !v.empty();
       }},
  };
  return *flags;
}

bool ParseArgs(int argc, char** argv, Options& options) {
  for (int i = 1; i + 1 < argc; i += 2) {
    auto flag = Flags().find(argv[i]);
    if (flag == Flags().end() || !flag->second(options, argv[i + 1])) return false;
  }
  return argc % 2 == 1 && options.batch > 0 && options.seq > 0 && options.steps > 0;
}

// A model behind one step function: loss of a random batch.
struct Bench {
  std::shared_ptr<torch::nn::Module> module;
  std::function<torch::Tensor()> loss;
  int64_t layers = 0, hidden = 0, vocab = 0;
  int64_t decoded_tokens = 0;     // Positions that reach the LM decoder.
  int64_t positional_params = 0;  // Position/type embeddings: lookups, no FLOPs.
};

nlohmann::json ModelConfig(const std::string& model) {
  if (model == "bert-base") return {{"model_type", "bert"}, {"architectures", {"BertForMaskedLM"}}};
  if (model == "gpt2-small") return {{"model_type", "gpt2"}};
  if (model == "gpt2-tiny") {
    return {{"model_type", "gpt2"}, {"n_embd", 128}, {"n_layer", 2}, {"n_head", 2}};
  }
  return nullptr;
}

Bench MakeBert(const Options& o) {
  auto model = CreateMaskedLm(ModelConfig(o.model));
  if (!model.ok()) throw std::runtime_error(std::string(model.status().message()));
  std::shared_ptr<MaskedLmModel> m = *model;
  torch::Tensor ids = torch::randint(999, m->VocabSize(), {o.batch, o.seq}, torch::kLong);
  // DataCollatorForLanguageModeling: 15% of positions carry a label.
  torch::Tensor picked = torch::rand({o.batch, o.seq}).lt(0.15);
  torch::Tensor labels = torch::where(picked, ids, torch::full_like(ids, -100));
  const int64_t decoded = picked.sum().item<int64_t>();
  const torch::Device device(o.device);
  m->to(device);
  ids = ids.to(device);
  labels = labels.to(device);
  EncoderInputs inputs{ids, torch::ones_like(ids), torch::zeros_like(ids)};
  Bench bench{m,
              [m, inputs, labels] { return m->ForwardLoss(inputs, labels); },
              12,
              768,
              m->VocabSize(),
              decoded,
              (512 + 2) * 768};
  return bench;
}

Bench MakeGpt2(const Options& o) {
  auto model = CreateCausalLm(ModelConfig(o.model));
  if (!model.ok()) throw std::runtime_error(std::string(model.status().message()));
  std::shared_ptr<CausalLmModel> m = *model;
  const torch::Device device(o.device);
  m->to(device);
  torch::Tensor ids = torch::randint(m->VocabSize(), {o.batch, o.seq}, torch::kLong).to(device);
  torch::Tensor mask = torch::ones_like(ids);
  const nlohmann::json config = m->HfConfig();
  const int64_t hidden = config["n_embd"], layers = config["n_layer"];
  return {m,
          [m, ids, mask] { return m->ForwardLoss(ids, mask, ids); },
          layers,
          hidden,
          m->VocabSize(),
          o.batch * (o.seq - 1),
          m->MaxPositions() * hidden};
}

// FLOPs of one training step (forward + backward = 3x forward).
double StepFlops(const Bench& b, const Options& o) {
  int64_t params = 0;
  for (const auto& p : b.module->parameters()) params += p.numel();
  const double tokens = static_cast<double>(o.batch * o.seq);
  const double embedding = static_cast<double>(b.vocab * b.hidden);  // Used by the decoder only.
  const double dense = static_cast<double>(params - b.positional_params) - embedding;
  const double decoder = 6.0 * embedding * static_cast<double>(b.decoded_tokens);
  const double attention =
      12.0 * b.layers * o.batch * static_cast<double>(o.seq * o.seq) * b.hidden;
  return 6.0 * dense * tokens + decoder + attention;
}

// Best GFLOP/s of a [M,K]x[K,N] matmul of the given dtype over ~1 s.
double MatmulCeiling(torch::ScalarType dtype, const torch::Device& device) {
  const int64_t n = device.is_cuda() ? 8192 : 1024;
  const auto options = torch::TensorOptions().dtype(dtype).device(device);
  torch::Tensor a = torch::randn({n, n}, options), b = torch::randn({n, n}, options);
  double best = 0;
  const auto until = Clock::now() + std::chrono::seconds(1);
  for (int i = 0; i < 3 || Clock::now() < until; ++i) {
    const auto start = Clock::now();
    torch::Tensor c = torch::mm(a, b);
    if (device.is_cuda()) torch::cuda::synchronize();
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    best = std::max(best, 2.0 * n * n * n / s / 1e9);
  }
  return best;
}

// Seconds of one step's phases.
struct StepTimes {
  double forward = 0, backward = 0, optimizer = 0;
  double Total() const { return forward + backward + optimizer; }
};

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Phase times on CUDA include waiting for the device at the end of each phase.
StepTimes RunStep(Bench& bench, torch::optim::Optimizer& optimizer, bool bf16,
                  const torch::Device& device) {
  const auto wait = [&] {
    if (device.is_cuda()) torch::cuda::synchronize();
  };
  StepTimes times;
  auto start = Clock::now();
  optimizer.zero_grad();
  at::autocast::set_autocast_enabled(device.type(), bf16);
  torch::Tensor loss = bench.loss();
  at::autocast::set_autocast_enabled(device.type(), false);
  wait();
  times.forward = Since(start);
  start = Clock::now();
  loss.backward();
  wait();
  times.backward = Since(start);
  start = Clock::now();
  optimizer.step();
  if (bf16) at::autocast::clear_cache();
  wait();
  times.optimizer = Since(start);
  return times;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

int Run(const Options& o) {
  const int64_t threads = o.threads > 0 ? o.threads : std::thread::hardware_concurrency();
  torch::set_num_threads(static_cast<int>(threads));
  torch::manual_seed(0);
  const bool bf16 = o.precision == "bf16";
  const torch::Device device(o.device);
  if (device.is_cuda() && !torch::cuda::is_available()) {
    throw std::runtime_error("--device cuda: no CUDA device is visible");
  }
  at::autocast::set_autocast_dtype(device.type(), at::kBFloat16);
  Bench bench = o.model == "bert-base" ? MakeBert(o) : MakeGpt2(o);
  bench.module->train();
  // lm-train's AdamW (worker/optim/fused_adamw.h); --optimizer torch: LibTorch's own.
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  const auto adamw_options = torch::optim::AdamWOptions(5e-5).weight_decay(0.0);
  if (o.optimizer == "torch") {
    optimizer = std::make_unique<torch::optim::AdamW>(bench.module->parameters(), adamw_options);
  } else {
    optimizer = std::make_unique<FusedAdamW>(bench.module->parameters(), adamw_options);
  }
  for (int64_t i = 0; i < o.warmup; ++i) RunStep(bench, *optimizer, bf16, device);
  std::vector<double> times, optimizer_times;
  for (int64_t i = 0; i < o.steps; ++i) {
    std::unique_ptr<torch::autograd::profiler::RecordProfile> profile;
    if (i == o.steps - 1 && !o.profile.empty()) {
      profile = std::make_unique<torch::autograd::profiler::RecordProfile>(o.profile);
    }
    const StepTimes step = RunStep(bench, *optimizer, bf16, device);
    profile.reset();
    times.push_back(step.Total());
    optimizer_times.push_back(step.optimizer);
    std::cout << "step " << i << ": " << step.Total() << " s (forward " << step.forward
              << ", backward " << step.backward << ", optimizer " << step.optimizer << ")\n";
  }
  const double median = Median(times);
  const double tokens_per_s = static_cast<double>(o.batch * o.seq) / median;
  const double gflops = StepFlops(bench, o) / median / 1e9;
  const double ceiling = MatmulCeiling(bf16 ? torch::kBFloat16 : torch::kFloat32, device);
  std::cout << "model " << o.model << " batch " << o.batch << " seq " << o.seq << " " << o.precision
            << " threads " << threads << " optimizer " << o.optimizer << " device " << o.device
            << "\n"
            << "tokens/s " << tokens_per_s << ", " << gflops << " GFLOP/s achieved vs " << ceiling
            << " GFLOP/s " << o.precision << " matmul ceiling (" << 100.0 * gflops / ceiling
            << "%)\n";
  nlohmann::json summary = {{"model", o.model},
                            {"batch", o.batch},
                            {"seq", o.seq},
                            {"precision", o.precision},
                            {"threads", threads},
                            {"optimizer", o.optimizer},
                            {"device", o.device},
                            {"steps", o.steps},
                            {"step_s_median", median},
                            {"optimizer_s_median", Median(optimizer_times)},
                            {"tokens_per_s", tokens_per_s},
                            {"gflops", gflops},
                            {"matmul_ceiling_gflops", ceiling},
                            {"step_s", times}};
  std::cout << summary.dump() << std::endl;
  return 0;
}

}  // namespace
}  // namespace lmtrain

int main(int argc, char** argv) {
  lmtrain::TuneMallocForTraining();  // As lm-train does (common/malloc_tuning.h).
  lmtrain::Options options;
  if (!lmtrain::ParseArgs(argc, argv, options) || lmtrain::ModelConfig(options.model).is_null()) {
    std::cerr << "usage: lm-bench-train --model bert-base|gpt2-small|gpt2-tiny --batch B --seq T "
                 "[--precision fp32|bf16] [--steps N] [--warmup W] [--threads K] "
                 "[--optimizer fused|torch] [--device cpu|cuda]\n";
    return 2;
  }
  try {
    return lmtrain::Run(options);
  } catch (const std::exception& e) {  // c10::Error included.
    std::cerr << "lm-bench-train: " << e.what() << "\n";
    return 1;
  }
}
