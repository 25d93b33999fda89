#include "worker/trainer/trainer_checkpoint.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "common/atomic_file.h"
#include "common/json_integer.h"
#include "common/status_macros.h"
#include "worker/models/rng_state.h"
#include "worker/trainer/torch_errors.h"
#include "worker/trainer_base/training_plan.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;

constexpr char kOptimizerFile[] = "optimizer.pt";
constexpr char kRngFile[] = "rng_state.pt";
constexpr char kCudaRngFile[] = "rng_state_cuda.pt";
constexpr char kStateFile[] = "lmtrain_state.json";
constexpr int kStateFormat = 1;

nlohmann::json RecordToJson(const ResumeRecord& r) {
  nlohmann::json j = {{"format", kStateFormat},
                      {"global_step", r.global_step},
                      {"total_loss_sum", r.total_loss_sum},
                      {"total_samples", r.total_samples},
                      {"early_stopping_patience_counter", r.early_stopping_counter},
                      {"train_batch_size", r.train_batch_size},
                      {"gradient_accumulation_steps", r.gradient_accumulation_steps},
                      {"num_train_examples", r.num_train_examples},
                      {"seed", r.seed},
                      {"data_seed", r.data_seed},
                      {"train_sampling_strategy", r.train_sampling_strategy},
                      {"group_by_length", r.train_sampling_strategy == "group_by_length"},
                      {"dataloader_drop_last", r.dataloader_drop_last},
                      {"scheduler_steps", r.scheduler_steps}};
  if (!r.lr_scheduler.is_null()) j["lr_scheduler"] = r.lr_scheduler;
  return j;
}

// Integer member `key` of `j` (`fallback` when it is missing, if given). DataLoss naming the
// file and key when it is missing or not an integer (1e30 and 1.5 included).
absl::StatusOr<int64_t> RecordInteger(const nlohmann::json& j, const char* key,
                                      const std::string& path,
                                      std::optional<int64_t> fallback = std::nullopt) {
  const std::optional<int64_t> value = fallback.has_value() ? JsonIntegerMemberOr(j, key, *fallback)
                                                            : JsonIntegerMember<int64_t>(j, key);
  if (!value.has_value()) {
    return absl::DataLossError(path + ": \"" + key + "\" is missing or not an integer");
  }
  return *value;
}

absl::StatusOr<ResumeRecord> RecordFromFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("cannot open " + path);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() ||
      JsonIntegerMember<int64_t>(j, "format") != kStateFormat) {
    return absl::DataLossError(path + " is not an lmtrain_state.json of format 1");
  }
  ResumeRecord r;
  ASSIGN_OR_RETURN(r.global_step, RecordInteger(j, "global_step", path));
  ASSIGN_OR_RETURN(r.total_samples, RecordInteger(j, "total_samples", path));
  ASSIGN_OR_RETURN(r.early_stopping_counter,
                   RecordInteger(j, "early_stopping_patience_counter", path, 0));
  ASSIGN_OR_RETURN(r.train_batch_size, RecordInteger(j, "train_batch_size", path));
  ASSIGN_OR_RETURN(r.gradient_accumulation_steps,
                   RecordInteger(j, "gradient_accumulation_steps", path));
  ASSIGN_OR_RETURN(r.num_train_examples, RecordInteger(j, "num_train_examples", path));
  ASSIGN_OR_RETURN(r.seed, RecordInteger(j, "seed", path));
  ASSIGN_OR_RETURN(r.data_seed, RecordInteger(j, "data_seed", path, r.seed));
  ASSIGN_OR_RETURN(r.scheduler_steps, RecordInteger(j, "scheduler_steps", path, r.global_step));
  try {
    r.total_loss_sum = j.at("total_loss_sum").get<double>();
    r.train_sampling_strategy =
        j.value("train_sampling_strategy",
                std::string(j.value("group_by_length", false) ? "group_by_length" : "random"));
    r.dataloader_drop_last = j.value("dataloader_drop_last", false);
    if (j.contains("lr_scheduler")) r.lr_scheduler = j["lr_scheduler"];
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(path + ": " + e.what());
  }
  return r;
}

// Where the optimizer's parameters live (the CPU when it has none).
c10::Device ParameterDevice(const torch::optim::Optimizer& optimizer) {
  for (const auto& group : optimizer.param_groups()) {
    if (!group.params().empty()) return group.params().front().device();
  }
  return c10::kCPU;
}

// Runs `fn`, turning a LibTorch error into DataLoss naming `path` (a corrupt archive).
template <typename Fn>
absl::Status ReadArchive(const std::string& path, Fn&& fn) {
  if (!fs::exists(path)) return absl::NotFoundError("checkpoint file missing: " + path);
  absl::Status status = CatchTorchErrors(
      [&] {
        fn();
        return absl::OkStatus();
      },
      [&] { return "reading " + path; });
  if (status.ok()) return status;
  return absl::DataLossError(std::string(status.message()));
}

}  // namespace

absl::Status WriteResumeFiles(const std::string& dir, const torch::optim::Optimizer& optimizer,
                              const ResumeRecord& record) {
  RETURN_IF_ERROR(CatchTorchErrors(
      [&] {
        torch::serialize::OutputArchive archive;
        optimizer.save(archive);
        archive.save_to(dir + "/" + kOptimizerFile);
        torch::save(RngState(c10::kCPU), dir + "/" + kRngFile);
        const c10::Device device = ParameterDevice(optimizer);
        if (device.is_cuda()) torch::save(RngState(device), dir + "/" + kCudaRngFile);
        return absl::OkStatus();
      },
      [&] { return "writing the optimizer and RNG state into " + dir; }));
  // Last: its presence marks the resume files complete.
  return WriteFileAtomically(dir + "/" + kStateFile, RecordToJson(record).dump(2) + "\n");
}

ResumeRecord RunShapeOf(const TrainingSpec& training, int64_t global_batch,
                        int64_t num_train_examples) {
  ResumeRecord r;
  r.train_batch_size = global_batch;
  r.gradient_accumulation_steps = training.gradient_accumulation_steps;
  r.num_train_examples = num_train_examples;
  r.seed = training.seed;
  r.data_seed = DataSeedOf(training);
  r.train_sampling_strategy = SamplingStrategyOf(training);
  r.dataloader_drop_last = training.dataloader_drop_last;
  return r;
}

bool SameRunShape(const ResumeRecord& a, const ResumeRecord& b) {
  return a.train_batch_size == b.train_batch_size &&
         a.gradient_accumulation_steps == b.gradient_accumulation_steps &&
         a.num_train_examples == b.num_train_examples && a.seed == b.seed &&
         a.train_sampling_strategy == b.train_sampling_strategy &&
         // The sequential order is the same for every data_seed.
         (a.data_seed == b.data_seed || a.train_sampling_strategy == "sequential") &&
         a.dataloader_drop_last == b.dataloader_drop_last;
}

absl::StatusOr<ResumeRecord> ReadResumeFiles(const std::string& dir,
                                             torch::optim::Optimizer* optimizer) {
  if (!fs::exists(dir + "/" + kStateFile) && fs::exists(dir + "/model.safetensors")) {
    return absl::FailedPreconditionError(
        dir +
        " holds the model only (saved with training.save_only_model, as HF's): training cannot "
        "resume from it; start a new run from its weights with model.name_or_path: " +
        dir);
  }
  ASSIGN_OR_RETURN(ResumeRecord record, RecordFromFile(dir + "/" + kStateFile));
  torch::Tensor rng;
  RETURN_IF_ERROR(
      ReadArchive(dir + "/" + kRngFile, [&] { torch::load(rng, dir + "/" + kRngFile); }));
  const std::string optimizer_path = dir + "/" + kOptimizerFile;
  RETURN_IF_ERROR(ReadArchive(optimizer_path, [&] {
    torch::serialize::InputArchive archive;
    archive.load_from(optimizer_path, ParameterDevice(*optimizer));  // Moments next to params.
    optimizer->load(archive);
  }));
  const c10::Device device = ParameterDevice(*optimizer);
  const std::string cuda_rng_path = dir + "/" + kCudaRngFile;
  // A checkpoint written on the CPU resumes on a GPU with the GPU's own stream.
  torch::Tensor cuda_rng;
  if (device.is_cuda() && fs::exists(cuda_rng_path)) {
    RETURN_IF_ERROR(ReadArchive(cuda_rng_path, [&] { torch::load(cuda_rng, cuda_rng_path); }));
  }
  RETURN_IF_ERROR(ReadArchive(dir + "/" + kRngFile, [&] { SetRngState(c10::kCPU, rng); }));
  if (cuda_rng.defined()) {
    RETURN_IF_ERROR(ReadArchive(cuda_rng_path, [&] { SetRngState(device, cuda_rng); }));
  }
  return record;
}

absl::Status LoadModelWeights(const std::string& dir, PretrainedModel* model) {
  ASSIGN_OR_RETURN(auto tensors, ReadHfWeights(dir));
  LoadReport report;
  RETURN_IF_ERROR(CatchTorchErrors([&] { return model->LoadHfStateDict(tensors, &report); },
                                   [&] { return "loading " + dir + "/model.safetensors"; }));
  if (!report.missing_keys.empty()) {
    return absl::DataLossError(dir + "/model.safetensors lacks " +
                               std::to_string(report.missing_keys.size()) +
                               " of the model's tensors (first: " + report.missing_keys[0] + ")");
  }
  return absl::OkStatus();
}

}  // namespace lmtrain
