// Reading shared/fixtures/hf-tiny: the directories and their reference.json (HF transformers
// 4.31 outputs on fixed inputs; format in the fixtures' README.md). Architecture-neutral, so
// the BERT-family parity tests can share it.
#pragma once

#include <torch/torch.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/worker/models/hf_fixtures.h"

namespace lmtrain::testing {

struct HfGradReference {
  double norm = 0;           // L2 norm of the whole gradient.
  std::vector<double> head;  // First values of the flattened gradient (8).
};

struct HfReference {
  std::string name;
  std::string model_class;
  std::string model_type;
  std::map<std::string, torch::Tensor> inputs;   // input_ids, attention_mask, ...: int64.
  std::map<std::string, torch::Tensor> labels;   // labels / start_positions ...: int64.
  std::map<std::string, torch::Tensor> outputs;  // logits / start_logits ...: float32.
  std::vector<torch::Tensor> hidden_states;      // HF output_hidden_states, float32.
  double loss = 0;
  // Every parameter of named_parameters(), tied ones once, in HF's order.
  std::vector<std::pair<std::string, HfGradReference>> grads;
  double sgd_lr = 0;          // One step p -= sgd_lr * grad on every parameter ...
  double sgd_loss_after = 0;  // ... gives this loss.
  std::vector<std::string> safetensors_keys;
  std::vector<std::string> omitted_keys;  // state_dict keys HF leaves out of the file.
  nlohmann::json config_full;             // config.to_dict() (use_diff=False).
};

// Parses one reference.json. InvalidArgument names the file and the bad field.
absl::StatusOr<HfReference> ReadHfReference(const std::string& path);

// Sorted subdirectories of `root` whose config.json has this model_type (any model_type when
// empty); empty when `root` does not exist.
std::vector<std::string> HfFixtureDirs(const std::string& root, const std::string& model_type);

}  // namespace lmtrain::testing
