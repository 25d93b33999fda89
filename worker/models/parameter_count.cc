#include "worker/models/parameter_count.h"

#include <unordered_set>

namespace lmtrain {

int64_t NumParameters(const torch::nn::Module& model, bool exclude_embeddings,
                      bool trainable_only) {
  std::unordered_set<const void*> skip;
  if (exclude_embeddings) {
    for (const std::shared_ptr<torch::nn::Module>& module : model.modules()) {
      if (const auto* embedding = module->as<torch::nn::Embedding>()) {
        skip.insert(embedding->weight.unsafeGetTensorImpl());
      }
    }
  }
  std::unordered_set<const void*> seen;
  int64_t count = 0;
  for (const torch::Tensor& p : model.parameters()) {
    const void* impl = p.unsafeGetTensorImpl();
    if (skip.count(impl) > 0 || !seen.insert(impl).second) continue;
    if (trainable_only && !p.requires_grad()) continue;
    count += p.numel();
  }
  return count;
}

double TrainingFlopsPerPosition(const torch::nn::Module& model) {
  return 6.0 * static_cast<double>(NumParameters(model, /*exclude_embeddings=*/true));
}

}  // namespace lmtrain
