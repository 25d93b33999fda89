#include "tests/worker/models/hf_reference.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tests/test_paths.h"
#include "worker/models/json_file.h"

namespace lmtrain::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Shape of a nested list of numbers, checked to be rectangular by Flatten.
std::vector<int64_t> ShapeOf(const json& value) {
  std::vector<int64_t> shape;
  for (const json* level = &value; level->is_array(); level = &(*level)[0]) {
    shape.push_back(static_cast<int64_t>(level->size()));
    if (level->empty()) break;
  }
  return shape;
}

absl::Status Flatten(const json& value, size_t depth, const std::vector<int64_t>& shape,
                     std::vector<double>& out) {
  if (depth == shape.size()) {
    if (!value.is_number()) return absl::InvalidArgumentError("non-numeric entry");
    out.push_back(value.get<double>());
    return absl::OkStatus();
  }
  if (!value.is_array() || static_cast<int64_t>(value.size()) != shape[depth]) {
    return absl::InvalidArgumentError("ragged nested list");
  }
  for (const json& item : value) RETURN_IF_ERROR(Flatten(item, depth + 1, shape, out));
  return absl::OkStatus();
}

absl::StatusOr<torch::Tensor> NestedTensor(const json& value, torch::ScalarType dtype) {
  std::vector<int64_t> shape = ShapeOf(value);
  std::vector<double> flat;
  RETURN_IF_ERROR(Flatten(value, 0, shape, flat));
  return torch::tensor(flat, torch::kFloat64).reshape(shape).to(dtype);
}

// {"shape": [...], "data": [flat row-major]} as float32.
absl::StatusOr<torch::Tensor> ShapedTensor(const json& value) {
  if (!value.contains("shape") || !value.contains("data")) {
    return absl::InvalidArgumentError("expected {\"shape\", \"data\"}");
  }
  std::vector<int64_t> shape = value["shape"].get<std::vector<int64_t>>();
  std::vector<double> data = value["data"].get<std::vector<double>>();
  torch::Tensor tensor = torch::tensor(data, torch::kFloat64).to(torch::kFloat32);
  if (tensor.numel() != c10::multiply_integers(shape)) {
    return absl::InvalidArgumentError("data size does not match shape");
  }
  return tensor.reshape(shape);
}

absl::StatusOr<std::map<std::string, torch::Tensor>> IntTensors(const json& object) {
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& [key, value] : object.items()) {
    absl::StatusOr<torch::Tensor> tensor = NestedTensor(value, torch::kInt64);
    if (!tensor.ok())
      return absl::InvalidArgumentError(absl::StrCat(key, ": ", tensor.status().message()));
    tensors[key] = *tensor;
  }
  return tensors;
}

absl::Status ParseTensors(const json& doc, HfReference& ref) {
  ASSIGN_OR_RETURN(ref.inputs, IntTensors(doc.at("inputs")));
  ASSIGN_OR_RETURN(ref.labels, IntTensors(doc.at("labels")));
  for (const auto& [key, value] : doc.at("outputs").items()) {
    ASSIGN_OR_RETURN(ref.outputs[key], ShapedTensor(value));
  }
  for (const json& value : doc.at("hidden_states")) {
    ASSIGN_OR_RETURN(torch::Tensor tensor, ShapedTensor(value));
    ref.hidden_states.push_back(tensor);
  }
  return absl::OkStatus();
}

void ParseScalars(const nlohmann::ordered_json& doc, HfReference& ref) {
  ref.name = doc.at("name").get<std::string>();
  ref.model_class = doc.at("model_class").get<std::string>();
  ref.model_type = doc.at("model_type").get<std::string>();
  ref.loss = doc.at("loss").get<double>();
  for (const auto& [name, grad] : doc.at("grads").items()) {
    ref.grads.emplace_back(name, HfGradReference{grad.at("norm").get<double>(),
                                                 grad.at("head").get<std::vector<double>>()});
  }
  ref.sgd_lr = doc.at("sgd_step").at("lr").get<double>();
  ref.sgd_loss_after = doc.at("sgd_step").at("loss_after").get<double>();
  ref.safetensors_keys = doc.at("safetensors_keys").get<std::vector<std::string>>();
  ref.omitted_keys = doc.at("state_dict_keys_omitted_from_file").get<std::vector<std::string>>();
}

}  // namespace

absl::StatusOr<HfReference> ReadHfReference(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  HfReference ref;
  try {
    // ordered_json keeps "grads" in named_parameters() order.
    const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(in);
    ParseScalars(doc, ref);
    const json plain = json::parse(doc.dump());
    ref.config_full = plain.at("config_full");
    absl::Status status = ParseTensors(plain, ref);
    if (!status.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", status.message()));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", e.what()));
  }
  return ref;
}

std::vector<std::string> HfFixtureDirs(const std::string& root, const std::string& model_type) {
  std::vector<std::string> dirs;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(root, error)) {
    absl::StatusOr<json> config = ReadJsonFile((entry.path() / "config.json").string());
    if (config.ok() && config->is_object() &&
        (model_type.empty() || config->value("model_type", "") == model_type)) {
      dirs.push_back(entry.path().string());
    }
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

}  // namespace lmtrain::testing
