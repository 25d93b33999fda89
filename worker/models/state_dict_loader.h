// Copies checkpoint tensors into a model's parameters by HF key, the way HF's
// `_load_state_dict_into_model` does: key variants resolved by the architecture, unknown keys
// and unloaded parameters reported, shape mismatches fatal.
// Thread-safe as long as no one else uses the parameters meanwhile.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "worker/models/pretrained_model.h"

namespace lmtrain {

// Where a checkpoint key goes.
struct KeyTarget {
  std::string parameter;  // Model parameter name; one not in the model makes the key unexpected.
  // Lower wins when several keys reach the same parameter (0: the canonical name itself,
  // 1: a prefix variant, 2: a tied alias such as lm_head.weight); losers are silently skipped.
  int priority = 0;
};

// Maps a checkpoint key to its target, or std::nullopt to ignore the key silently (buffers that
// older versions saved, like GPT-2's h.N.attn.bias).
using KeyResolver = std::function<std::optional<KeyTarget>(const std::string& key)>;

// Copies `checkpoint` into `parameters` (name -> live parameter, e.g. named_parameters()).
// All-or-nothing: everything is validated before the first copy, so on error the model is
// unchanged. Floating-point sources are converted to the parameter's dtype and device.
// InvalidArgument (naming the key): shape mismatch (both shapes quoted), or a dtype that cannot
// be converted (integer/bool into a floating parameter). `report` (optional) is overwritten with
// the missing parameters (in model order) and unexpected keys (sorted).
absl::Status LoadParameters(const std::map<std::string, torch::Tensor>& checkpoint,
                            const torch::OrderedDict<std::string, torch::Tensor>& parameters,
                            const KeyResolver& resolve, LoadReport* report);

}  // namespace lmtrain
