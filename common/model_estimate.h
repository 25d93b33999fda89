// Back-of-the-envelope sizes for `lmctl validate` and lm-train's pre-flight check: parameter
// count, training memory and step time of a job, from the model's HF config.json keys alone (no
// LibTorch, no weights read). Sizes are counted in floating point, so absurd configs give huge
// numbers, never overflowed ones.
//
// Shapes: GPT-2 (n_layer, n_embd, n_head, n_inner, n_positions) and the BERT family (bert,
// roberta, electra, albert: num_hidden_layers, hidden_size, ...; distilbert: n_layers, dim,
// hidden_dim, n_heads). Parameters are counted exactly for the base model (embeddings,
// attention, MLP, LayerNorms; ALBERT's shared layers once) plus the task head.
// Memory per process, fp32 weights: weights 4 B + gradients 4 B + optimizer state (AdamW 8 B,
// Adafactor ~0, SGD 4 B with momentum else 0, Adagrad 4 B, RMSprop 4 B plus 4 B each for
// momentum and centered) per parameter, plus activations ~ batch*seq*layers*(34*d + 5*heads*seq)*2
// B (Korthikanti et al. 2022, fp16 figure doubled for fp32; halved again under bf16/fp16) and the
// logits. Step time: FLOPs = 6 * params * tokens + 12 * layers * seq * d * tokens (forward +
// backward) at an assumed throughput (see Options). Estimates only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/statusor.h"
#include "common/job_spec.h"

namespace lmtrain {

struct ModelShape {
  std::string model_type;
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t intermediate = 0;
  int64_t positions = 0;       // n_positions / max_position_embeddings.
  int64_t vocab = 0;           // 0: unknown (taken from the tokenizer by the caller).
  int64_t type_vocab = 0;      // Token-type embeddings (BERT family).
  int64_t embedding = 0;       // ALBERT/ELECTRA factorised embedding size; = hidden otherwise.
  bool shared_layers = false;  // ALBERT: one set of layer weights.
};

// InvalidArgument naming the key when the config lacks model_type, has a size that is not a
// positive integer (vocab_size may be absent: 0, from the tokenizer), or is of a model_type other
// than the ones above.
absl::StatusOr<ModelShape> ModelShapeFromConfig(const nlohmann::json& config);

struct EstimateOptions {
  std::string task = "clm";  // Picks the head: clm/mlm tied LM head, qa span head,
  int num_labels = 2;        // glue/classification pooler + classifier.
  int64_t batch_size = 8;    // per_device_train_batch_size
  int64_t seq_len = 128;     // block_size / max_seq_length actually used
  int64_t gradient_accumulation_steps = 1;
  std::string optim = "adamw_torch";
  OptimArgs optim_args;
  bool half_precision = false;  // bf16 or fp16 autocast
  // Assumed sustained throughput per process, FLOP/s. Default: 2e10 for CPU — the order of
  // magnitude of tiny-gpt2's ~15k tokens/s on one core (README) — and 1e14 for a CUDA device.
  double flops_per_second = 0;  // 0: by device
  bool on_gpu = false;
};

// {"parameters","memory_bytes":{"weights","gradients","optimizer","activations","total"},
//  "tokens_per_step","flops_per_step","assumed_flops_per_second","step_seconds"}
nlohmann::json EstimateTraining(const ModelShape& shape, const EstimateOptions& options);

// The parameter count alone (base model + head for options.task); a double, exact below 2^53.
double CountParameters(const ModelShape& shape, const EstimateOptions& options);

// Whether training fits this machine, from an EstimateTraining result: the weights are built in
// host memory first (on a GPU too), and a CPU job holds weights, gradients, optimizer state and
// activations there. ResourceExhausted saying how much is needed and how much there is, naming
// model.config (and the batch size when activations tip it over).
// `machine` names the memory in the message ("this machine has 16.0 GiB").
absl::Status CheckTrainingFits(const nlohmann::json& estimate, bool on_gpu, double machine_bytes,
                               const std::string& machine = "this machine");

// The floor that lm-train checks before building a model from the job's inline model.config,
// and lm-server at submit: the weights (on the CPU also gradients and optimizer state) fit
// machine_bytes, activations aside. OkStatus when the model is not built from model.config or
// the config is not a shape known here (the model's own parser reports that). `vocab` 0: the
// config's vocab_size, or none when it has none (a lower bound).
absl::Status CheckConfigModelFits(const JobSpec& spec, int64_t vocab, bool on_gpu,
                                  double machine_bytes,
                                  const std::string& machine = "this machine");

// This machine's physical memory in bytes (sysconf).
double PhysicalMemoryBytes();

// "1.23 M", "456 k", "7.0 G" style; bytes as "12.3 MiB".
std::string HumanCount(double n);
std::string HumanBytes(double bytes);

}  // namespace lmtrain
