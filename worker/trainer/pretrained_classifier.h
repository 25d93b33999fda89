// A pretrained *ForSequenceClassification (or base encoder) directory loaded for a job's labels,
// as HF run_glue.py's from_pretrained(num_labels=..., ignore_mismatched_sizes) loads it.
//
// The saved head size is the one HF's PretrainedConfig gives the directory's config.json:
// len(id2label) when it has id2label, else num_labels, else 2 (save_pretrained leaves both out for
// the default two labels). A saved head of the job's size is loaded; a head of another size is
// dropped and a fresh one initialised (torch's global generator: seed it first).
// Not thread-safe (LibTorch's global generator); call from the training thread.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/statusor.h"
#include "worker/models/pretrained_model.h"

namespace lmtrain {

struct PretrainedClassifier {
  std::shared_ptr<SequenceClassificationModel> model;
  LoadReport report;             // missing_keys: newly initialised; unexpected_keys: unused.
  int64_t saved_num_labels = 0;  // The saved head's size, as HF reads the saved config.
  bool head_replaced = false;    // The directory held a head of another size: dropped.
};

// Loads `dir` (config.json + weights) with `label_config` ({"num_labels": N, "id2label": ...,
// "label2id": ...}; num_labels required) written over its config. Errors: those of reading the
// directory and of the config ("<dir>/config.json: ..."); InvalidArgument when no tensor of the
// directory matches a parameter of the model.
absl::StatusOr<PretrainedClassifier> LoadPretrainedClassifier(const std::string& dir,
                                                              const nlohmann::json& label_config);

}  // namespace lmtrain
