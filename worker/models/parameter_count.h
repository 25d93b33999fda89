// Parameter counts as HF's PreTrainedModel.num_parameters() and the training FLOPs HF's Trainer
// derives from them (Trainer.floating_point_ops). LibTorch only here.
// Thread-safe: reads the module's parameter list only.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace lmtrain {

// The elements of every distinct parameter of `model` (a tensor registered under two names, a
// tied weight, counts once), frozen ones included; with `exclude_embeddings`, without the
// weights of its torch::nn::Embedding modules (word, position and token-type embeddings, and a
// decoder tied to them), as HF's num_parameters(exclude_embeddings=True); with
// `trainable_only`, only those that require grad (HF's get_model_param_count(trainable_only)).
int64_t NumParameters(const torch::nn::Module& model, bool exclude_embeddings,
                      bool trainable_only = false);

// HF's floating_point_ops per input position: 6 × the parameters without embeddings (a forward
// and a backward pass, 2 + 4 multiply-adds per weight and token). A micro-batch of input_ids
// [B, T] costs B × T times this, padding included.
double TrainingFlopsPerPosition(const torch::nn::Module& model);

}  // namespace lmtrain
