#include "common/model_estimate.h"

#include <unistd.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"

namespace lmtrain {
namespace {

// config[key] as a positive integer (>= 0 when `zero_ok`), `fallback` (HF's default) when
// absent or null.
absl::StatusOr<int64_t> IntKey(const nlohmann::json& config, const char* key, int64_t fallback,
                               bool zero_ok = false) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() < (zero_ok ? 0 : 1)) {
    return absl::InvalidArgumentError(absl::StrCat("model config: ", key, " must be an integer ",
                                                   zero_ok ? ">= 0" : "> 0", " (got ", it->dump(),
                                                   ")"));
  }
  return it->get<int64_t>();
}

double LayerParams(const ModelShape& s) {
  const double d = static_cast<double>(s.hidden), f = static_cast<double>(s.intermediate);
  return 4 * d * d + 4 * d    // q, k, v, output projections with biases
         + 2 * d * f + f + d  // MLP
         + 2 * 2 * d;         // two LayerNorms
}

}  // namespace

absl::StatusOr<ModelShape> ModelShapeFromConfig(const nlohmann::json& config) {
  ModelShape s;
  auto type = config.find("model_type");
  if (type == config.end() || !type->is_string()) {
    return absl::InvalidArgumentError("model config: model_type is required");
  }
  s.model_type = type->get<std::string>();
  ASSIGN_OR_RETURN(s.vocab, IntKey(config, "vocab_size", 0, /*zero_ok=*/true));
  if (s.model_type == "gpt2") {
    ASSIGN_OR_RETURN(s.layers, IntKey(config, "n_layer", 12));
    ASSIGN_OR_RETURN(s.hidden, IntKey(config, "n_embd", 768));
    ASSIGN_OR_RETURN(s.heads, IntKey(config, "n_head", 12));
    ASSIGN_OR_RETURN(s.intermediate, IntKey(config, "n_inner", 4 * s.hidden));
    ASSIGN_OR_RETURN(s.positions, IntKey(config, "n_positions", 1024));
  } else if (s.model_type == "distilbert") {
    ASSIGN_OR_RETURN(s.layers, IntKey(config, "n_layers", 6));
    ASSIGN_OR_RETURN(s.hidden, IntKey(config, "dim", 768));
    ASSIGN_OR_RETURN(s.heads, IntKey(config, "n_heads", 12));
    ASSIGN_OR_RETURN(s.intermediate, IntKey(config, "hidden_dim", 3072));
    ASSIGN_OR_RETURN(s.positions, IntKey(config, "max_position_embeddings", 512));
  } else if (s.model_type == "bert" || s.model_type == "roberta" || s.model_type == "electra" ||
             s.model_type == "albert") {
    const bool albert = s.model_type == "albert";
    ASSIGN_OR_RETURN(s.layers, IntKey(config, "num_hidden_layers", 12));
    ASSIGN_OR_RETURN(s.hidden, IntKey(config, "hidden_size", albert ? 4096 : 768));
    ASSIGN_OR_RETURN(s.heads, IntKey(config, "num_attention_heads", albert ? 64 : 12));
    ASSIGN_OR_RETURN(s.intermediate, IntKey(config, "intermediate_size", albert ? 16384 : 3072));
    ASSIGN_OR_RETURN(s.positions, IntKey(config, "max_position_embeddings", 512));
    ASSIGN_OR_RETURN(s.type_vocab, IntKey(config, "type_vocab_size", 2, /*zero_ok=*/true));
    ASSIGN_OR_RETURN(s.embedding, IntKey(config, "embedding_size", albert ? 128 : s.hidden));
    s.shared_layers = albert;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "model config: model_type '", s.model_type,
        "' is not one lmtrain knows (gpt2, bert, roberta, distilbert, albert, electra)"));
  }
  if (s.embedding == 0) s.embedding = s.hidden;
  return s;
}

double CountParameters(const ModelShape& s, const EstimateOptions& o) {
  const double d = static_cast<double>(s.hidden), e = static_cast<double>(s.embedding);
  const double vocab = static_cast<double>(s.vocab);
  double n =
      vocab * e + static_cast<double>(s.positions) * e + static_cast<double>(s.type_vocab) * e;
  if (s.model_type != "gpt2") n += 2 * e;  // Embedding LayerNorm.
  if (e != d) n += e * d + d;              // Factorised embedding projection.
  n += static_cast<double>(s.shared_layers ? 1 : s.layers) * LayerParams(s);
  if (s.model_type == "gpt2") n += 2 * d;               // Final LayerNorm (ln_f).
  if (o.task == "mlm") n += d * e + e + 2 * e + vocab;  // Transform, LayerNorm, decoder bias.
  if (o.task == "qa") n += 2 * d + 2;
  if (o.task == "glue" || o.task == "classification") {
    if (s.model_type != "gpt2" && s.model_type != "distilbert") n += d * d + d;  // Pooler.
    if (s.model_type == "distilbert") n += d * d + d;                            // pre_classifier.
    n += d * o.num_labels + o.num_labels;
  }
  return n;
}

namespace {

// Bytes of optimizer state per fp32 parameter.
double OptimizerStateBytes(const EstimateOptions& o) {
  const bool momentum = o.optim_args.momentum.value_or(0) > 0;
  if (o.optim == "adafactor") return 0;
  if (o.optim == "sgd") return momentum ? 4 : 0;
  if (o.optim == "adagrad") return 4;
  if (o.optim == "rmsprop")
    return 4 + (momentum ? 4 : 0) + (o.optim_args.centered.value_or(false) ? 4 : 0);
  return 8;  // AdamW's two moments.
}

}  // namespace

nlohmann::json EstimateTraining(const ModelShape& s, const EstimateOptions& o) {
  const double params = CountParameters(s, o);
  const double weights = 4.0 * params, grads = 4.0 * params;
  const double optimizer = OptimizerStateBytes(o) * params;
  const double b = o.batch_size, t = o.seq_len;
  double activations = b * t * s.layers * (34.0 * s.hidden + 5.0 * s.heads * t) * 2.0;
  const int64_t vocab_out = (o.task == "clm" || o.task == "mlm") ? s.vocab : 0;
  activations += 3.0 * 4.0 * b * t * vocab_out;  // Logits, their softmax and gradient.
  if (o.half_precision) activations /= 2;
  const double tokens = b * t * o.gradient_accumulation_steps;
  const double flops = 6.0 * params * tokens + 12.0 * s.layers * t * s.hidden * tokens;
  const double rate = o.flops_per_second > 0 ? o.flops_per_second : (o.on_gpu ? 1e14 : 2e10);
  return {{"parameters", params},
          {"memory_bytes",
           {{"weights", weights},
            {"gradients", grads},
            {"optimizer", optimizer},
            {"activations", activations},
            {"total", weights + grads + optimizer + activations}}},
          {"tokens_per_step", static_cast<int64_t>(tokens)},
          {"flops_per_step", flops},
          {"assumed_flops_per_second", rate},
          {"step_seconds", flops / rate}};
}

absl::Status CheckTrainingFits(const nlohmann::json& estimate, bool on_gpu, double machine_bytes,
                               const std::string& machine) {
  const nlohmann::json& m = estimate.at("memory_bytes");
  const double weights = m.at("weights").get<double>();
  const double state = weights + m.at("gradients").get<double>() + m.at("optimizer").get<double>();
  const double total = m.at("total").get<double>();
  const std::string have = absl::StrCat(machine, " has ", HumanBytes(machine_bytes));
  const std::string params = HumanCount(estimate.at("parameters").get<double>());
  if (weights > machine_bytes || (!on_gpu && state > machine_bytes)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "model.config: a model of ", params, " parameters needs ",
        HumanBytes(on_gpu ? weights : state),
        on_gpu ? " of host memory for its weights" : " for weights, gradients and optimizer state",
        "; ", have));
  }
  if (!on_gpu && total > machine_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("training.per_device_train_batch_size: training this model needs about ",
                     HumanBytes(total), " with its activations at this batch size; ", have,
                     " (lower the batch size or sequence length, or set gradient_checkpointing)"));
  }
  return absl::OkStatus();
}

absl::Status CheckConfigModelFits(const JobSpec& spec, int64_t vocab, bool on_gpu,
                                  double machine_bytes, const std::string& machine) {
  if (!spec.model.config.is_object() || spec.model.config.empty()) return absl::OkStatus();
  absl::StatusOr<ModelShape> shape = ModelShapeFromConfig(spec.model.config);
  if (!shape.ok()) return absl::OkStatus();
  if (vocab > 0 && shape->vocab == 0) shape->vocab = vocab;
  EstimateOptions o;
  o.task = spec.task;
  o.batch_size = 1;  // Weights and optimizer state only: activations are the batch's business.
  o.seq_len = 1;
  o.optim = spec.training.optim;
  o.optim_args = spec.training.optim_args;
  return CheckTrainingFits(EstimateTraining(*shape, o), on_gpu, machine_bytes, machine);
}

double PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

std::string HumanCount(double n) {
  if (n >= 1e12) return absl::StrFormat("%.3g", n);
  if (n >= 1e9) return absl::StrFormat("%.2f G", n / 1e9);
  if (n >= 1e6) return absl::StrFormat("%.2f M", n / 1e6);
  if (n >= 1e3) return absl::StrFormat("%.1f k", n / 1e3);
  return absl::StrFormat("%.0f", n);
}

std::string HumanBytes(double bytes) {
  if (bytes >= 1024.0 * 1024 * 1024 * 1024) {
    return absl::StrFormat("%.3g TiB", bytes / (1024.0 * 1024 * 1024 * 1024));
  }
  if (bytes >= 1024.0 * 1024 * 1024) return absl::StrFormat("%.2f GiB", bytes / (1 << 30));
  if (bytes >= 1024.0 * 1024) return absl::StrFormat("%.1f MiB", bytes / (1 << 20));
  if (bytes >= 1024.0) return absl::StrFormat("%.1f KiB", bytes / 1024);
  return absl::StrFormat("%.0f B", bytes);
}

}  // namespace lmtrain
