#include "worker/trainer/pretrained_classifier.h"

#include <iterator>
#include <map>
#include <utility>

#include "common/status_macros.h"
#include "worker/models/encoder_config.h"
#include "worker/models/json_file.h"

namespace lmtrain {

absl::StatusOr<PretrainedClassifier> LoadPretrainedClassifier(const std::string& dir,
                                                              const nlohmann::json& label_config) {
  const std::string config_path = dir + "/config.json";
  ASSIGN_OR_RETURN(nlohmann::json config, ReadJsonFile(config_path));
  // EncoderConfig resolves num_labels as PretrainedConfig does (id2label, num_labels, else 2).
  absl::StatusOr<EncoderConfig> saved = EncoderConfig::FromJson(config);
  if (!saved.ok()) {
    return absl::Status(saved.status().code(),
                        config_path + ": " + std::string(saved.status().message()));
  }
  PretrainedClassifier out;
  out.saved_num_labels = saved->num_labels;
  const bool same_size = saved->num_labels == label_config.at("num_labels").get<int64_t>();
  for (const auto& [key, value] : label_config.items()) config[key] = value;
  ASSIGN_OR_RETURN(out.model, CreateSequenceClassification(config));
  ASSIGN_OR_RETURN(auto tensors, ReadHfWeights(dir));
  for (auto it = tensors.begin(); !same_size && it != tensors.end();) {
    // A head of another size: dropped, so that a fresh one is initialised.
    const bool head = it->first.find("classifier") != std::string::npos;
    out.head_replaced |= head;
    it = head ? tensors.erase(it) : std::next(it);
  }
  RETURN_IF_ERROR(out.model->LoadHfStateDict(tensors, &out.report));
  if (out.report.missing_keys.size() >= out.model->parameters().size()) {
    return absl::InvalidArgumentError(dir + ": no tensor matches a parameter of this model");
  }
  return out;
}

}  // namespace lmtrain
