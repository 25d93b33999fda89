#include "common/internal/hf_ignored_fields.h"

#include <optional>
#include <string>

#include "common/internal/yaml_tree.h"

namespace lmtrain::internal {
namespace {

constexpr char kLogging[] =
    "lm-train prints HF's log dictionaries and a progress line on stdout; rank 0 reports";
constexpr char kColumns[] = "each task has its fixed inputs, labels and metrics";
constexpr char kLoader[] =
    "batches are built in the trainer process (lm-train --threads sets torch's threads)";
constexpr char kDdp[] = "gradients are summed in ~25 MB buckets as DDP does by default";
constexpr char kHub[] =
    "there is no Hub: checkpoints and the final model go to the artifact store "
    "(lmctl download ID DIR)";
constexpr char kTracker[] = "the job's name names the run; TensorBoard is the only tracker";
constexpr char kParallel[] = "data parallelism only (resources.workers, resources.gpus_per_worker)";
constexpr char kCompile[] = "LibTorch C++ has no torch.compile";
constexpr char kLiger[] = "Liger kernels are not available";

struct Ignored {
  std::string_view key;
  const char* reason;
};

// A key that has no effect, with HF's default as the job file would spell it: "null", "[]",
// "true", a number or a string.
struct IgnoredAtDefault {
  std::string_view key;
  std::string_view hf_default;
  const char* reason;
};

constexpr IgnoredAtDefault kIgnored[] = {
    {"output_dir", "null",
     "lm-train writes to --output-dir DIR (under lm-server, the job's folder)"},
    {"average_tokens_across_devices", "true",
     "clm and mlm losses are always the mean over the update's target tokens on every process"},
    {"gradient_checkpointing_kwargs", "null",
     "the recomputation restores dropout's random state and gives the same gradients with "
     "either use_reentrant"},
    {"torch_compile_backend", "null", kCompile},
    {"torch_compile_mode", "null", kCompile},
    {"liger_kernel_config", "null", kLiger},
    {"use_cache", "false", "training keeps no key/value cache"},
    {"log_on_each_node", "true", kLogging},
    {"log_level", "passive", kLogging},
    {"log_level_replica", "warning", kLogging},
    {"disable_tqdm", "null", kLogging},
    {"logging_nan_inf_filter", "true",
     "a non-finite loss stops the job (exit 1) instead of being left out of the logged mean"},
    {"run_name", "null", kTracker},
    {"project", "huggingface", kTracker},
    {"trackio_space_id", "null", kTracker},
    {"trackio_bucket_id", "null", kTracker},
    {"trackio_static_space_id", "null", kTracker},
    {"prediction_loss_only", "false", kColumns},
    {"eval_do_concat_batches", "true", kColumns},
    {"eval_use_gather_object", "false", kColumns},
    {"include_for_metrics", "[]", kColumns},
    {"batch_eval_metrics", "false", kColumns},
    {"remove_unused_columns", "true", kColumns},
    {"label_names", "null", kColumns},
    {"length_column_name", "length", kColumns},
    {"eval_accumulation_steps", "null", "evaluation outputs are moved to the host batch by batch"},
    {"save_on_each_node", "false", "rank 0 writes to the shared output folder"},
    {"enable_jit_checkpoint", "false", "SIGTERM always saves a checkpoint at the next update"},
    {"hub_token", "null", kHub},
    {"hub_private_repo", "null", kHub},
    {"hub_model_id", "null", kHub},
    {"hub_strategy", "every_save", kHub},
    {"hub_always_push", "false", kHub},
    {"hub_revision", "null", kHub},
    {"ignore_data_skip", "false", "a resume skips the data order without reading batches"},
    {"restore_callback_states_from_checkpoint", "false",
     "a resume restores all of the trainer's state"},
    {"accelerator_config", "null",
     "the data order and batches are lm-train's own (seeded, every "
     "rank a full batch)"},
    {"dataloader_num_workers", "0", kLoader},
    {"dataloader_pin_memory", "true", kLoader},
    {"dataloader_persistent_workers", "false", kLoader},
    {"dataloader_prefetch_factor", "null", kLoader},
    {"dataloader_multiprocessing_context", "null", kLoader},
    {"dataloader_in_order", "true", kLoader},
    {"ddp_find_unused_parameters", "null", kDdp},
    {"ddp_bucket_cap_mb", "null", kDdp},
    {"ddp_broadcast_buffers", "null", kDdp},
    {"ddp_static_graph", "null", kDdp},
    {"ddp_backend", "null", "the backend is Gloo for CPU tensors and NCCL for CUDA ones"},
    {"ddp_timeout", "1800", "set LMTRAIN_DIST_TIMEOUT_S in lm-train's environment"},
    {"local_rank", "-1", "lm-worker sets each process's rank from resources"},
};

constexpr Ignored kOffOnly[] = {
    {"torch_compile", kCompile},
    {"use_liger_kernel", kLiger},
    {"push_to_hub", kHub},
    {"optim_target_modules", "GaLore and APOLLO are not available"},
    {"fsdp", kParallel},
    {"fsdp_config", kParallel},
    {"deepspeed", kParallel},
    {"parallelism_config", kParallel},
    {"debug", "there are no debug modes (underflow_overflow, tpu_metrics_debug)"},
};

// Accepted only when true, the one thing lmtrain does.
constexpr Ignored kOnOnly[] = {
    {"save_safetensors", "lmtrain always writes safetensors"},
};

// Whether `node` turns nothing on: null, false, 0, an empty string, or a list or mapping of
// such values only.
bool TurnsNothingOn(const YamlNode& node) {
  if (node.IsNull()) return true;
  if (node.IsScalar()) {
    const std::string& text = node.Scalar();
    if (text.empty() || text == "0" || text == "0.0") return true;
    const std::optional<bool> flag = ParseYamlBool(text);
    return flag.has_value() && !*flag && node.Tag() != "!";
  }
  for (YamlNode item : node.Items()) {
    if (!TurnsNothingOn(item)) return false;
  }
  for (auto [key, value] : node.Entries()) {
    if (!TurnsNothingOn(value)) return false;
  }
  return true;
}

// Whether `node` spells HF's default `hf_default` (as IgnoredAtDefault writes it): null, an
// empty list (or null) for "[]", the same boolean, number or unquoted-or-quoted string.
bool IsHfDefault(const YamlNode& node, std::string_view hf_default) {
  if (node.IsNull()) return hf_default == "null" || hf_default == "[]";
  if (node.IsSequence()) return hf_default == "[]" && node.size() == 0;
  if (!node.IsScalar()) return false;
  const std::string& text = node.Scalar();
  if (text == hf_default) return true;
  const std::optional<bool> flag = ParseYamlBool(text);
  if (flag.has_value() && node.Tag() != "!") {
    return hf_default == (*flag ? "true" : "false");
  }
  const std::optional<double> value = ParseDecimal(text);
  return value.has_value() && value == ParseDecimal(hf_default);
}

}  // namespace

std::vector<Field<TrainingSpec>> HfIgnoredTrainingFields() {
  std::vector<Field<TrainingSpec>> fields;
  for (const IgnoredAtDefault& row : kIgnored) {
    const std::string message = "training." + std::string(row.key) +
                                " (HF's) has no effect in lmtrain and is ignored: " + row.reason;
    fields.push_back(
        {row.key,
         [message, hf_default = row.hf_default](YamlReader& r, const YamlNode& v,
                                                const std::string& path, TrainingSpec&) {
           if (!IsHfDefault(v, hf_default)) r.WarnAt(path, message);
         },
         nullptr});
  }
  for (const Ignored& row : kOffOnly) {
    const std::string message = "training." + std::string(row.key) +
                                " (HF's) is not available in lmtrain: " + row.reason +
                                "; remove the key or turn it off";
    fields.push_back(
        {row.key,
         [message](YamlReader& r, const YamlNode& v, const std::string& path, TrainingSpec&) {
           if (!TurnsNothingOn(v)) r.ReportAt(path, message);
         },
         nullptr});
  }
  for (const Ignored& row : kOnOnly) {
    const std::string message =
        "training." + std::string(row.key) + " (HF's) can only be true: " + row.reason;
    fields.push_back(
        {row.key,
         [message](YamlReader& r, const YamlNode& v, const std::string& path, TrainingSpec&) {
           const std::optional<bool> flag = r.ReadBool(v, path);
           if (flag.has_value() && !*flag) r.ReportAt(path, message);
         },
         nullptr});
  }
  return fields;
}

}  // namespace lmtrain::internal
