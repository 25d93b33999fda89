// NEFTune (Jain et al. 2023, "Noisy Embeddings Improve Instruction Finetuning"), as HF's Trainer
// applies it with neftune_noise_alpha (integrations/neftune.py's forward hook on the input
// embeddings).
#pragma once

#include <torch/torch.h>

namespace lmtrain::internal {

// The word embeddings `embeddings` ([B, T, E], the embedding lookup's output) plus noise drawn
// uniformly from [-m, m] with m = alpha / sqrt(T × E), in train mode; `embeddings` itself when
// !train or alpha == 0. m is computed in fp32 as HF's hook does (its torch.sqrt of T × E), and
// the noise is drawn with uniform_ from the device's default generator, so seeds, a
// checkpoint's restored RNG state and gradient checkpointing's RNG replay reproduce it.
torch::Tensor NeftuneNoise(const torch::Tensor& embeddings, double alpha, bool train);

}  // namespace lmtrain::internal
