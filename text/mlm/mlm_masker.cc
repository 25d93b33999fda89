#include "text/mlm/mlm_masker.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "common/status_macros.h"

namespace lmtrain {
namespace {

// DataCollatorForWholeWordMask's max_predictions.
constexpr int64_t kMaxPredictions = 512;

using WordRun = std::pair<size_t, size_t>;  // [begin, end) token range of one word

absl::Status CheckProbability(const char* name, double p) {
  if (p >= 0.0 && p <= 1.0) return absl::OkStatus();
  return absl::InvalidArgumentError(std::string(name) + " must be in [0, 1] (got " +
                                    std::to_string(p) + ")");
}

// Python's round(): to nearest, ties to even, whatever the FPU rounding mode.
int64_t RoundHalfEven(double x) {
  const double floor = std::floor(x);
  const double fraction = x - floor;
  const auto f = static_cast<int64_t>(floor);
  if (fraction > 0.5) return f + 1;
  if (fraction < 0.5) return f;
  return f % 2 == 0 ? f : f + 1;
}

// The words of `example`: maximal runs of non-special tokens with one word id (a token without
// a word id is a word by itself).
std::vector<WordRun> WordRuns(const MlmExampleView& example) {
  std::vector<WordRun> words;
  for (size_t t = 0; t < example.size(); ++t) {
    if (example.special_tokens_mask[t] != 0) continue;
    const int32_t word = example.word_ids[t];
    const bool continues = !words.empty() && words.back().second == t && word != kNoWord &&
                           example.word_ids[t - 1] == word;
    if (continues) {
      words.back().second = t + 1;
    } else {
      words.emplace_back(t, t + 1);
    }
  }
  return words;
}

void SelectWord(const WordRun& word, std::vector<bool>* selected) {
  for (size_t t = word.first; t < word.second; ++t) (*selected)[t] = true;
}

// DataCollatorForWholeWordMask._whole_word_mask.
void SelectFixedCount(std::vector<WordRun> words, size_t num_tokens, double probability,
                      RandomSource& source, std::vector<bool>* selected) {
  for (size_t i = words.size(); i > 1; --i) {
    std::swap(words[i - 1], words[UniformBelow(source, i)]);
  }
  const int64_t wanted = std::min<int64_t>(
      kMaxPredictions,
      std::max<int64_t>(1, RoundHalfEven(static_cast<double>(num_tokens) * probability)));
  int64_t taken = 0;
  for (const WordRun& word : words) {
    if (taken >= wanted) break;
    const auto length = static_cast<int64_t>(word.second - word.first);
    if (taken + length > wanted) continue;
    SelectWord(word, selected);
    taken += length;
  }
}

}  // namespace

absl::StatusOr<MlmMasker> MlmMasker::Create(const MaskingOptions& options) {
  if (options.mask_token_id < 0) {
    return absl::InvalidArgumentError(
        "mask_token_id must be >= 0: the tokenizer needs a mask "
        "token for masked language modelling");
  }
  if (options.vocab_size <= 0) {
    return absl::InvalidArgumentError("vocab_size must be > 0 (got " +
                                      std::to_string(options.vocab_size) + ")");
  }
  RETURN_IF_ERROR(CheckProbability("mlm_probability", options.mlm_probability));
  RETURN_IF_ERROR(CheckProbability("mask_replace_prob", options.mask_replace_prob));
  RETURN_IF_ERROR(CheckProbability("random_replace_prob", options.random_replace_prob));
  if (options.mask_replace_prob + options.random_replace_prob > 1.0) {
    return absl::InvalidArgumentError("mask_replace_prob + random_replace_prob must be <= 1 (got " +
                                      std::to_string(options.mask_replace_prob) + " + " +
                                      std::to_string(options.random_replace_prob) + ")");
  }
  return MlmMasker(options);
}

std::vector<bool> MlmMasker::Select(const MlmExampleView& example, RandomSource& source) const {
  std::vector<bool> selected(example.size(), false);
  const double p = options_.mlm_probability;
  if (!options_.whole_word_masking) {
    for (size_t t = 0; t < example.size(); ++t) {
      if (example.special_tokens_mask[t] == 0) selected[t] = Bernoulli(source, p);
    }
    return selected;
  }
  std::vector<WordRun> words = WordRuns(example);
  if (options_.whole_word_selection == WholeWordSelection::kFixedCount) {
    SelectFixedCount(std::move(words), example.size(), p, source, &selected);
    return selected;
  }
  for (const WordRun& word : words) {
    if (Bernoulli(source, p)) SelectWord(word, &selected);
  }
  return selected;
}

int32_t MlmMasker::Replace(int32_t id, RandomSource& source) const {
  if (Bernoulli(source, options_.mask_replace_prob)) return options_.mask_token_id;
  if (options_.random_replace_prob <= 0.0 || options_.mask_replace_prob >= 1.0) return id;
  const double scaled = options_.random_replace_prob / (1.0 - options_.mask_replace_prob);
  if (!Bernoulli(source, scaled)) return id;
  return static_cast<int32_t>(UniformBelow(source, static_cast<uint64_t>(options_.vocab_size)));
}

absl::StatusOr<MaskedExample> MlmMasker::Mask(const MlmExampleView& example,
                                              RandomSource& source) const {
  if (example.special_tokens_mask.size() != example.size() ||
      example.word_ids.size() != example.size()) {
    return absl::InvalidArgumentError(
        "MLM example has " + std::to_string(example.size()) + " ids but " +
        std::to_string(example.special_tokens_mask.size()) + " special-token flags and " +
        std::to_string(example.word_ids.size()) + " word ids");
  }
  const std::vector<bool> selected = Select(example, source);
  MaskedExample masked;
  masked.input_ids.assign(example.input_ids.begin(), example.input_ids.end());
  masked.labels.assign(example.size(), kIgnoreIndex);
  for (size_t t = 0; t < example.size(); ++t) {
    if (!selected[t]) continue;
    masked.labels[t] = example.input_ids[t];
    masked.input_ids[t] = Replace(example.input_ids[t], source);
  }
  return masked;
}

MaskingOptions MaskingOptionsFor(const MlmMasking& masking, int32_t mask_token_id,
                                 int32_t vocab_size) {
  MaskingOptions options;
  options.mask_token_id = mask_token_id;
  options.vocab_size = vocab_size;
  options.mlm_probability = masking.probability;
  options.mask_replace_prob = masking.mask_replace_prob;
  options.random_replace_prob = masking.random_replace_prob;
  options.whole_word_masking = masking.whole_word;
  options.whole_word_selection =
      masking.fixed_count ? WholeWordSelection::kFixedCount : WholeWordSelection::kPerWord;
  return options;
}

absl::StatusOr<std::vector<MaskedExample>> MaskWithFixedSeed(
    const MlmMasker& masker, absl::Span<const MlmExampleView> examples, uint64_t seed) {
  std::vector<MaskedExample> masked;
  masked.reserve(examples.size());
  for (size_t i = 0; i < examples.size(); ++i) {
    Mt19937RandomSource source = EvalMaskSource(seed, static_cast<int64_t>(i));
    ASSIGN_OR_RETURN(MaskedExample example, masker.Mask(examples[i], source));
    masked.push_back(std::move(example));
  }
  return masked;
}

}  // namespace lmtrain
