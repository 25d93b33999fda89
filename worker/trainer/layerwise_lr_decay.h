// ELECTRA's layer-wise learning-rate decay (training.layerwise_lr_decay, as in ELECTRA's GLUE
// fine-tuning runner): the layers nearest the input, which hold the most general pre-trained
// features, learn slowest. With L transformer layers and decay d, a parameter's learning rate is
// learning_rate times (ELECTRA's _get_layer_lrs: depth 0 for the embeddings, i + 1 for layer i,
// L + 2 for the task head, and d^(L + 2 - depth))
//   d^(L + 1 - i) in transformer layer i (0-based: layer 0 is nearest the embeddings),
//   d^(L + 2)   in the embeddings (word/position/type embeddings, their LayerNorm and
//               ELECTRA's embeddings_project),
//   1           everywhere else: the task head (classifier, qa_outputs, LM head) and pooler.
// Layers are found by HF parameter names: "<...>.layer.<i>." (BERT, RoBERTa, ELECTRA,
// DistilBERT) or "<...>.h.<i>." (GPT-2); embeddings by a name part containing "embeddings" or
// GPT-2's "wte" / "wpe". Torch-free; thread-safe: pure functions.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace lmtrain {

// The multiplier of each of `names` (full dotted parameter names), in order. decay == 1 gives
// all ones. InvalidArgument when decay is not in (0, 1], or when decay < 1 and no name is in a
// numbered layer (ALBERT, whose layers share one set of weights, has none).
absl::StatusOr<std::vector<double>> LayerwiseLrScales(const std::vector<std::string>& names,
                                                      double decay);

}  // namespace lmtrain
