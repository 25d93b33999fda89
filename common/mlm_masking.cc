#include "common/mlm_masking.h"

namespace lmtrain {

MlmMasking ResolveMlmMasking(const DataSpec& data) {
  MlmMasking m;
  m.whole_word = data.whole_word_masking;
  m.fixed_count = m.whole_word && data.whole_word_selection == "fixed_count";
  const bool per_word = m.whole_word && !m.fixed_count;
  m.probability = per_word && data.wwm_probability ? *data.wwm_probability : data.mlm_probability;
  // Whole words chosen one by one are masked outright (the HF course's collator, and
  // transformers forcing mask_replace_prob = 1 with whole_word_mask=True), unless the job
  // file asks for replacement probabilities.
  const bool all_masked = per_word && !data.mask_replace_prob && !data.random_replace_prob;
  m.mask_replace_prob = data.mask_replace_prob.value_or(all_masked ? 1.0 : 0.8);
  m.random_replace_prob = data.random_replace_prob.value_or(all_masked ? 0.0 : 0.1);
  return m;
}

}  // namespace lmtrain
