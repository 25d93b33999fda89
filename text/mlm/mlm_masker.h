// MlmMasker: dynamic masking for masked language modelling with the semantics of Hugging Face's
// DataCollatorForLanguageModeling.torch_mask_tokens (and, with whole_word_masking, of its whole
// word variants), drawing from an injected RandomSource. Torch-free.
//
// Selection (which tokens get a label):
//   token level (default)  each non-special token with probability mlm_probability;
//   whole word, kPerWord   each word (its first token) with probability mlm_probability, and
//                          then all of its tokens (recent transformers'
//                          DataCollatorForLanguageModeling with whole_word_mask=True);
//   whole word, kFixedCount  the classic DataCollatorForWholeWordMask: words in a shuffled
//                          order are taken whole while the count stays within
//                          min(512, max(1, round_half_even(len(tokens) * mlm_probability)))
//                          tokens (len counts special tokens too).
// Special tokens are never selected (padding is added later, by the batcher, so never either).
// Words are the example's word_ids; a non-special token without one is a word by itself.
// Labels: the original id where selected, kIgnoreIndex (-100) elsewhere.
// Replacement, per selected token: [MASK] with probability mask_replace_prob (0.8), else a
// uniformly random id in [0, vocab_size) with probability random_replace_prob /
// (1 - mask_replace_prob) (0.1 / 0.2 = 0.5: 10% overall), else unchanged (10%). (Recent
// transformers forces mask_replace_prob = 1 when whole_word_mask=True, and the HF course's
// whole_word_masking_data_collator masks every selected token: MaskingOptionsFor gives
// kPerWord that, unless the job file sets the probabilities. The classic
// DataCollatorForWholeWordMask, kFixedCount, keeps 80/10/10.)
//
// The draws, in this order (the contract that makes masks reproducible from a seed):
//   1. selection: token level, one Bernoulli per non-special token in order; kPerWord, one per
//      word at its first token; kFixedCount, a Fisher-Yates shuffle of the words (for i = n-1
//      down to 1, j = UniformBelow(i + 1)).
//   2. replacement, for each selected token in order: one Bernoulli(mask_replace_prob); when it
//      fails and random replacement is on (random_replace_prob > 0, mask_replace_prob < 1), one
//      Bernoulli(scaled), and when that succeeds one UniformBelow(vocab_size).
//
// Thread safety: immutable after Create; Mask may run on several threads at once, each with
// its own RandomSource.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/mlm_masking.h"
#include "text/mlm/mlm_examples.h"
#include "text/mlm/random_source.h"

namespace lmtrain {

inline constexpr int32_t kIgnoreIndex = -100;

enum class WholeWordSelection { kPerWord, kFixedCount };

struct MaskingOptions {
  int32_t mask_token_id = -1;        // Required (>= 0): the tokenizer's MaskId().
  int32_t vocab_size = 0;            // Required (> 0): random ids are drawn from [0, vocab_size).
  double mlm_probability = 0.15;     // In [0, 1].
  double mask_replace_prob = 0.8;    // In [0, 1].
  double random_replace_prob = 0.1;  // In [0, 1]; mask_replace_prob + this <= 1.
  bool whole_word_masking = false;
  WholeWordSelection whole_word_selection = WholeWordSelection::kPerWord;
};

// One masked example: the model's input and its labels, one entry per token.
struct MaskedExample {
  std::vector<int32_t> input_ids;
  std::vector<int32_t> labels;  // Original id where selected, kIgnoreIndex elsewhere.
};

class MlmMasker {
 public:
  // InvalidArgument naming the option when one is out of range.
  static absl::StatusOr<MlmMasker> Create(const MaskingOptions& options);

  // Masks one example, drawing from `source` (see the draw order above). InvalidArgument when
  // the example's three spans differ in size.
  absl::StatusOr<MaskedExample> Mask(const MlmExampleView& example, RandomSource& source) const;

  const MaskingOptions& options() const { return options_; }

 private:
  explicit MlmMasker(const MaskingOptions& options) : options_(options) {}
  std::vector<bool> Select(const MlmExampleView& example, RandomSource& source) const;
  int32_t Replace(int32_t id, RandomSource& source) const;

  MaskingOptions options_;
};

// The options of a job's resolved masking (common/mlm_masking.h), for a tokenizer whose mask
// token is `mask_token_id` and a model of `vocab_size` ids.
MaskingOptions MaskingOptionsFor(const MlmMasking& masking, int32_t mask_token_id,
                                 int32_t vocab_size);

// Fixed evaluation masks (the HF course's insert_random_mask): example i is masked with
// EvalMaskSource(seed, i), so every evaluation sees the same masks, whatever the batch size or
// how many examples are kept. Errors: those of Mask.
absl::StatusOr<std::vector<MaskedExample>> MaskWithFixedSeed(
    const MlmMasker& masker, absl::Span<const MlmExampleView> examples, uint64_t seed);

}  // namespace lmtrain
