// lm-bench-train: full training steps (forward, backward, AdamW) of real-shaped models with
// random weights and tokens, to compare with Hugging Face's Trainer on the same machine.
//
//   lm-bench-train --model bert-base|gpt2-small|gpt2-tiny --batch B --seq T
//                  [--precision fp32|bf16] [--steps N] [--warmup W] [--threads K]
//                  [--optimizer fused|torch] [--device cpu|cuda] [--cuda-graph 0|1]
//                  [--profile TRACE.json] [--label-smoothing S]
//
// Prints each step's time, then tokens/s and achieved GFLOP/s (6·params·tokens for the dense
// layers, the MLM/LM decoder only on the positions that have a label, plus 12·L·B·T²·H for
// attention) against a measured matmul ceiling of the same precision; the last line is JSON.
// bf16 runs under autocast on the device (as HF's --bf16), the cast cache cleared after each
// step. --device cuda moves the model and batch to the GPU and waits for it at the end of each
// step (AdamW as one fused multi-tensor kernel there; the MLM loss on rows chosen on the host,
// as lm-train's). --cuda-graph 1 runs each step as lm-train's training.cuda_graphs does
// (worker/trainer/cuda_graph_step.h): the whole update, gradient clipping to 1.0 included,
// captured once as a CUDA graph and replayed; the warm-up steps then include the eager updates
// before the capture and the capture itself. --profile records the last timed step
// with LibTorch's profiler and writes it as a Chrome trace (chrome://tracing, Perfetto).
// --label-smoothing S trains with training.label_smoothing_factor S (the smoothed loss inside the
// fused LM head on a CPU).
#include <ATen/autocast_mode.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/cuda.h>
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
#include "worker/trainer/autocast_guard.h"
#include "worker/trainer/cuda_graph_step.h"
#include "worker/trainer/mlm_task.h"

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
  bool cuda_graph = false;          // cuda only: lm-train's training.cuda_graphs.
  std::string profile;              // A Chrome trace of the last timed step; "": none.
  double label_smoothing = 0;       // training.label_smoothing_factor.
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
      {"--cuda-graph",
       [](Options& o, const std::string& v) {
         o.cuda_graph = v == "1";
         return v == "0" || v == "1";
       }},
      {"--profile",
       [](Options& o, const std::string& v) {
         o.profile = v;
         return !v.empty();
       }},
      {"--label-smoothing",
       [](Options& o, const std::string& v) {
         o.label_smoothing = std::stod(v);
         return o.label_smoothing >= 0 && o.label_smoothing <= 1;
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
  // The same loss as a CUDA graph takes it: the batch's tensors, and the loss of such tensors.
  std::vector<torch::Tensor> inputs;
  CudaGraphStep::LossFn loss_of;
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
  m->SetLabelSmoothing(o.label_smoothing);
  torch::Tensor ids = torch::randint(999, m->VocabSize(), {o.batch, o.seq}, torch::kLong);
  // DataCollatorForLanguageModeling: 15% of positions carry a label.
  torch::Tensor picked = torch::rand({o.batch, o.seq}).lt(0.15);
  torch::Tensor labels = torch::where(picked, ids, torch::full_like(ids, -100));
  const int64_t decoded = picked.sum().item<int64_t>();
  // lm-train's MLM batch on a GPU: the labelled rows it chooses on the host.
  const LabelledRows at = ChooseLabelledRows(labels);
  const torch::Device device(o.device);
  m->to(device);
  ids = ids.to(device);
  labels = labels.to(device);
  const torch::Tensor rows = at.rows.to(device), targets = at.targets.to(device);
  EncoderInputs inputs{ids, {}, {}};  // lm-train's grouped MLM blocks: no padding, one segment.
  const bool cuda = device.is_cuda();
  Bench bench{m,
              [m, inputs, labels, rows, targets, cuda] {
                return cuda ? m->ForwardLossAt(inputs, rows, targets)
                            : m->ForwardLoss(inputs, labels);
              },
              {inputs.input_ids, inputs.attention_mask, inputs.token_type_ids, rows, targets},
              [m](const std::vector<torch::Tensor>& in) {
                return m->ForwardLossAt(EncoderInputs{in[0], in[1], in[2]}, in[3], in[4]);
              },
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
  m->SetLabelSmoothing(o.label_smoothing);
  const torch::Device device(o.device);
  m->to(device);
  torch::Tensor ids = torch::randint(m->VocabSize(), {o.batch, o.seq}, torch::kLong).to(device);
  torch::Tensor mask;  // No padding: the collator's batches come without a mask.
  const nlohmann::json config = m->HfConfig();
  const int64_t hidden = config["n_embd"], layers = config["n_layer"];
  return {m,
          [m, ids, mask] { return m->ForwardLoss(ids, mask, ids); },
          {ids, mask},
          [m](const std::vector<torch::Tensor>& in) { return m->ForwardLoss(in[0], in[1], in[0]); },
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
  std::unique_ptr<CudaGraphStep> graph;
  if (o.cuda_graph) {
    auto* fused = dynamic_cast<FusedAdamW*>(optimizer.get());
    if (!device.is_cuda() || fused == nullptr) {
      throw std::runtime_error("--cuda-graph 1 needs --device cuda and --optimizer fused");
    }
    graph = std::make_unique<CudaGraphStep>(fused, /*max_grad_norm=*/1.0);
  }
  const AutocastSpec autocast = AutocastSpec::For(device.type(), bf16, /*fp16=*/false);
  // A graph's update is timed whole (it waits for the device once, at its end).
  const auto step_once = [&] {
    if (graph == nullptr) return RunStep(bench, *optimizer, bf16, device);
    StepTimes times;
    const auto start = Clock::now();
    graph->Run(bench.inputs, [&](const std::vector<torch::Tensor>& in) {
      AutocastGuard guard(autocast);
      return bench.loss_of(in);
    });
    times.forward = Since(start);
    return times;
  };
  // Two eager updates and the capture come before the first replay.
  const int64_t warmup = graph != nullptr ? std::max<int64_t>(o.warmup, 3) : o.warmup;
  for (int64_t i = 0; i < warmup; ++i) step_once();
  if (graph != nullptr && graph->graphs() != 1) throw std::runtime_error("no graph was captured");
  std::vector<double> times, optimizer_times;
  for (int64_t i = 0; i < o.steps; ++i) {
    std::unique_ptr<torch::autograd::profiler::RecordProfile> profile;
    if (i == o.steps - 1 && !o.profile.empty()) {
      profile = std::make_unique<torch::autograd::profiler::RecordProfile>(o.profile);
    }
    const StepTimes step = step_once();
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
            << (o.cuda_graph ? " cuda-graph" : "") << "\n"
            << "tokens/s " << tokens_per_s << ", " << gflops << " GFLOP/s achieved vs " << ceiling
            << " GFLOP/s " << o.precision << " matmul ceiling (" << 100.0 * gflops / ceiling
            << "%)\n";
  nlohmann::json summary = {{"model", o.model},
                            {"batch", o.batch},
                            {"seq", o.seq},
                            {"precision", o.precision},
                            {"label_smoothing", o.label_smoothing},
                            {"threads", threads},
                            {"optimizer", o.optimizer},
                            {"device", o.device},
                            {"cuda_graph", o.cuda_graph},
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
                 "[--optimizer fused|torch] [--device cpu|cuda] [--cuda-graph 0|1] "
                 "[--label-smoothing S]\n";
    return 2;
  }
  try {
    return lmtrain::Run(options);
  } catch (const std::exception& e) {  // c10::Error included.
    std::cerr << "lm-bench-train: " << e.what() << "\n";
    return 1;
  }
}
