// The model registry and HF model directories (config.json + model.safetensors or
// pytorch_model.bin).
#include "worker/models/pretrained_model.h"

#include <filesystem>
#include <functional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "worker/models/encoder_models.h"
#include "worker/models/gpt2.h"
#include "worker/models/json_file.h"
#include "worker/models/pytorch_weights.h"
#include "worker/models/safetensors.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;

// The HF version whose file layout this code writes (config.json "transformers_version").
constexpr absl::string_view kTransformersVersion = "4.31.0";
constexpr char kConfigFile[] = "config.json";
constexpr char kWeightsFile[] = "model.safetensors";
constexpr char kWeightsIndexFile[] = "model.safetensors.index.json";
constexpr const char* kUnsupportedWeightFiles[] = {"tf_model.h5", "flax_model.msgpack"};

using WeightsReader =
    std::function<absl::StatusOr<std::map<std::string, torch::Tensor>>(const std::string&)>;

// HF's order of preference (from_pretrained): safetensors, then PyTorch's pickled format.
const std::pair<const char*, WeightsReader> kWeightFiles[] = {
    {kWeightsFile, [](const std::string& path) { return ReadSafetensors(path); }},
    {kWeightsIndexFile, ReadSafetensorsIndex},
    {"pytorch_model.bin", ReadPytorchWeights},
    {"pytorch_model.bin.index.json", ReadPytorchWeightsIndex},
};

using CausalLmFactory =
    std::function<absl::StatusOr<std::shared_ptr<CausalLmModel>>(const nlohmann::json&)>;

struct Architecture {
  absl::string_view model_type;
  CausalLmFactory create;
};

const Architecture kCausalLms[] = {
    {"gpt2",
     [](const nlohmann::json& config) -> absl::StatusOr<std::shared_ptr<CausalLmModel>> {
       ASSIGN_OR_RETURN(std::shared_ptr<Gpt2LMHeadModel> model, Gpt2LMHeadModel::Create(config));
       return std::shared_ptr<CausalLmModel>(std::move(model));
     }},
};

absl::StatusOr<std::map<std::string, torch::Tensor>> ReadWeightsIn(const fs::path& dir) {
  for (const auto& [name, read] : kWeightFiles) {
    if (fs::exists(dir / name)) return read((dir / name).string());
  }
  for (const char* name : kUnsupportedWeightFiles) {
    if (fs::exists(dir / name)) {
      return absl::UnimplementedError(
          absl::StrCat((dir / name).string(),
                       ": only safetensors and pytorch_model.bin weights are supported, not ", name,
                       ". Convert it once in Python: from_pretrained, then save_pretrained"));
    }
  }
  return absl::NotFoundError(
      absl::StrCat(dir.string(), ": no ", kWeightsFile, ", ", kWeightsIndexFile,
                   ", pytorch_model.bin or pytorch_model.bin.index.json in the model directory"));
}

// A checkpoint that shares no key with the model is a wrong directory, not a fresh start.
absl::Status CheckSomethingLoaded(const PretrainedModel& model, const LoadReport& report,
                                  const std::string& source) {
  if (report.missing_keys.size() < model.parameters().size()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": no tensor matches a parameter of this model (first unexpected key: '",
                   report.unexpected_keys.empty() ? "" : report.unexpected_keys.front(),
                   "'); is config.json's model_type right?"));
}

std::string DtypeName(const NamedTensors& tensors) {
  for (const auto& [name, tensor] : tensors) {
    if (!tensor.is_floating_point()) continue;
    switch (tensor.scalar_type()) {
      case torch::kFloat16:
        return "float16";
      case torch::kBFloat16:
        return "bfloat16";
      case torch::kFloat64:
        return "float64";
      default:
        return "float32";
    }
  }
  return "float32";
}

absl::Status WriteModelDir(const PretrainedModel& model, const fs::path& dir) {
  NamedTensors tensors = model.HfStateDict();
  nlohmann::json config = model.HfConfig();
  // As HF's save_pretrained: the parameters' dtype and the writing library's version.
  config["torch_dtype"] = DtypeName(tensors);
  config["transformers_version"] = kTransformersVersion;
  RETURN_IF_ERROR(WriteTextFile((dir / kConfigFile).string(), FormatHfJson(config)));
  return WriteSafetensors((dir / kWeightsFile).string(), tensors, {{"format", "pt"}});
}

template <typename Model>
absl::StatusOr<std::shared_ptr<Model>> Upcast(absl::StatusOr<std::shared_ptr<Model>> model) {
  return model;
}

template <typename Model, typename Derived>
absl::StatusOr<std::shared_ptr<Model>> Upcast(absl::StatusOr<std::shared_ptr<Derived>> model) {
  if (!model.ok()) return model.status();
  return std::shared_ptr<Model>(*std::move(model));
}

template <typename Model>
using Factory = std::function<absl::StatusOr<std::shared_ptr<Model>>(const nlohmann::json&)>;

// config.json + weights -> a model of the interface `Model`, built by `create`.
template <typename Model>
absl::StatusOr<std::shared_ptr<Model>> LoadModel(const std::string& dir,
                                                 const Factory<Model>& create, LoadReport* report) {
  const fs::path root(dir);
  std::error_code error;
  if (!fs::is_directory(root, error)) {
    return absl::NotFoundError(absl::StrCat(dir, ": model directory not found"));
  }
  const std::string config_path = (root / kConfigFile).string();
  ASSIGN_OR_RETURN(nlohmann::json config, ReadJsonFile(config_path));
  absl::StatusOr<std::shared_ptr<Model>> model = create(config);
  if (!model.ok()) {
    return absl::Status(model.status().code(),
                        absl::StrCat(config_path, ": ", model.status().message()));
  }
  ASSIGN_OR_RETURN(auto tensors, ReadWeightsIn(root));
  LoadReport local_report;
  absl::Status loaded = (*model)->LoadHfStateDict(tensors, &local_report);
  if (!loaded.ok()) {
    return absl::Status(loaded.code(), absl::StrCat(dir, ": ", loaded.message()));
  }
  RETURN_IF_ERROR(CheckSomethingLoaded(**model, local_report, dir));
  if (report != nullptr) *report = std::move(local_report);
  return model;
}

std::string FirstArchitecture(const nlohmann::json& config) {
  auto it = config.find("architectures");
  if (it == config.end() || !it->is_array() || it->empty() || !(*it)[0].is_string()) return "";
  return (*it)[0].get<std::string>();
}

template <typename Model>
absl::StatusOr<std::shared_ptr<PretrainedModel>> AsPretrained(
    absl::StatusOr<std::shared_ptr<Model>> model) {
  if (!model.ok()) return model.status();
  return std::shared_ptr<PretrainedModel>(*std::move(model));
}

using Loader = std::function<absl::StatusOr<std::shared_ptr<PretrainedModel>>(const std::string&,
                                                                              LoadReport*)>;

// By the architecture name's suffix (the prefix is the family, which model_type decides).
const std::pair<const char*, Loader> kArchitectureLoaders[] = {
    {"LMHeadModel",
     [](const std::string& d, LoadReport* r) { return AsPretrained(LoadCausalLm(d, r)); }},
    {"ForMaskedLM",
     [](const std::string& d, LoadReport* r) { return AsPretrained(LoadMaskedLm(d, r)); }},
    {"ForQuestionAnswering",
     [](const std::string& d, LoadReport* r) { return AsPretrained(LoadQuestionAnswering(d, r)); }},
    {"ForSequenceClassification",
     [](const std::string& d, LoadReport* r) {
       return AsPretrained(LoadSequenceClassification(d, r));
     }},
    {"ForPreTraining",
     [](const std::string& d, LoadReport* r) { return AsPretrained(LoadDiscriminator(d, r)); }},
};

}  // namespace

absl::Status PretrainedModel::SetGradientCheckpointing(bool enabled) {
  if (!enabled) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(name(), " does not support gradient checkpointing"));
}

absl::Status PretrainedModel::SetNeftuneNoiseAlpha(double alpha) {
  if (alpha == 0) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(name(), " does not support NEFTune"));
}

absl::StatusOr<std::shared_ptr<CausalLmModel>> CreateCausalLm(const nlohmann::json& config) {
  auto model_type = config.find("model_type");  // end() for non-objects too.
  if (model_type == config.end() || !model_type->is_string()) {
    return absl::InvalidArgumentError(
        "model config needs a \"model_type\" string (supported: \"gpt2\")");
  }
  for (const Architecture& architecture : kCausalLms) {
    if (model_type->get_ref<const std::string&>() == architecture.model_type) {
      return architecture.create(config);
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("model_type '", model_type->get<std::string>(),
                                                 "' is not supported yet (supported: gpt2)"));
}

absl::StatusOr<std::shared_ptr<CausalLmModel>> LoadCausalLm(const std::string& dir,
                                                            LoadReport* report) {
  return LoadModel<CausalLmModel>(dir, CreateCausalLm, report);
}

absl::StatusOr<std::shared_ptr<MaskedLmModel>> CreateMaskedLm(const nlohmann::json& config) {
  return Upcast<MaskedLmModel>(EncoderForMaskedLm::Create(config));
}

absl::StatusOr<std::shared_ptr<QuestionAnsweringModel>> CreateQuestionAnswering(
    const nlohmann::json& config) {
  return Upcast<QuestionAnsweringModel>(EncoderForQuestionAnswering::Create(config));
}

absl::StatusOr<std::shared_ptr<SequenceClassificationModel>> CreateSequenceClassification(
    const nlohmann::json& config) {
  return Upcast<SequenceClassificationModel>(EncoderForSequenceClassification::Create(config));
}

absl::StatusOr<std::shared_ptr<DiscriminatorModel>> CreateDiscriminator(
    const nlohmann::json& config) {
  return Upcast<DiscriminatorModel>(ElectraForPreTraining::Create(config));
}

absl::StatusOr<std::shared_ptr<MaskedLmModel>> LoadMaskedLm(const std::string& dir,
                                                            LoadReport* report) {
  return LoadModel<MaskedLmModel>(dir, CreateMaskedLm, report);
}

absl::StatusOr<std::shared_ptr<QuestionAnsweringModel>> LoadQuestionAnswering(
    const std::string& dir, LoadReport* report) {
  return LoadModel<QuestionAnsweringModel>(dir, CreateQuestionAnswering, report);
}

absl::StatusOr<std::shared_ptr<SequenceClassificationModel>> LoadSequenceClassification(
    const std::string& dir, LoadReport* report) {
  return LoadModel<SequenceClassificationModel>(dir, CreateSequenceClassification, report);
}

absl::StatusOr<std::shared_ptr<DiscriminatorModel>> LoadDiscriminator(const std::string& dir,
                                                                      LoadReport* report) {
  return LoadModel<DiscriminatorModel>(dir, CreateDiscriminator, report);
}

absl::StatusOr<std::shared_ptr<PretrainedModel>> LoadPretrained(const std::string& dir,
                                                                LoadReport* report) {
  ASSIGN_OR_RETURN(nlohmann::json config, ReadJsonFile((fs::path(dir) / kConfigFile).string()));
  const std::string architecture = FirstArchitecture(config);
  for (const auto& [suffix, load] : kArchitectureLoaders) {
    if (absl::EndsWith(architecture, suffix)) return load(dir, report);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      dir, "/config.json: architectures[0] '", architecture,
      "' is not supported (supported: GPT2LMHeadModel and {Bert,Roberta,DistilBert,Albert,"
      "Electra}For{MaskedLM,QuestionAnswering,SequenceClassification}, ElectraForPreTraining)"));
}

absl::Status SavePretrained(const PretrainedModel& model, const std::string& dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir, ": not a directory (SavePretrained writes into an existing one)"));
  }
  try {
    return WriteModelDir(model, fs::path(dir));
  } catch (const std::exception& e) {  // c10::Error from moving tensors to the CPU.
    return absl::InternalError(absl::StrCat(dir, ": saving the model failed: ", e.what()));
  }
}

absl::StatusOr<std::map<std::string, torch::Tensor>> ReadHfWeights(const std::string& dir) {
  return ReadWeightsIn(fs::path(dir));
}

}  // namespace lmtrain
