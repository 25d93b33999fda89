#include "text/qa/qa_features.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/parallel_map.h"
#include "common/status_macros.h"
#include "text/qa/internal/python_text.h"

namespace lmtrain {
namespace {

constexpr int kContext = 1;  // Sequence id of the context (the second sequence).

// The example's overflow windows, padded as asked.
absl::StatusOr<std::vector<Encoding>> EncodeExample(const Tokenizer& tokenizer,
                                                    const SquadExample& example,
                                                    const QaFeatureOptions& options) {
  if (options.max_seq_length == 0) {
    return absl::InvalidArgumentError("QA features: max_seq_length must be > 0");
  }
  const TruncationOptions truncation{options.max_seq_length, options.doc_stride,
                                     TruncationStrategy::kOnlySecond};
  absl::StatusOr<std::vector<Encoding>> windows =
      tokenizer.EncodePair(qa_internal::LStripPython(example.question), example.context, truncation,
                           /*return_overflowing=*/true);
  if (!windows.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("QA features for question id '", example.id,
                                                   "': ", windows.status().message()));
  }
  if (options.pad_to_max_length) {
    PaddingOptions padding;
    padding.strategy = PaddingOptions::Strategy::kMaxLength;
    padding.max_length = options.max_seq_length;
    RETURN_IF_ERROR(tokenizer.Pad(&*windows, padding));
  }
  return windows;
}

QaModelInputs ModelInputs(Encoding window) {
  return QaModelInputs{std::move(window.ids), std::move(window.type_ids),
                       std::move(window.attention_mask)};
}

int64_t ClsIndex(const Tokenizer& tokenizer, const std::vector<int32_t>& ids) {
  for (const std::optional<int32_t> marker : {tokenizer.ClsId(), tokenizer.BosId()}) {
    if (!marker.has_value()) continue;
    const auto it = std::find(ids.begin(), ids.end(), *marker);
    if (it != ids.end()) return it - ids.begin();
  }
  return 0;
}

// run_qa.py's labelling of one window (see the header for the quirk it keeps).
std::pair<int64_t, int64_t> AnswerTokens(const Encoding& window, const SquadExample& example,
                                         int64_t cls_index) {
  const auto& sequence_ids = window.sequence_ids;
  const auto& offsets = window.offsets;
  const int64_t size = static_cast<int64_t>(window.size());
  int64_t first = 0;
  while (first < size && sequence_ids[first] != kContext) ++first;
  int64_t last = size - 1;
  while (last >= 0 && sequence_ids[last] != kContext) --last;
  if (example.answers.empty() || first > last) return {cls_index, cls_index};

  const size_t start_byte = example.answers[0].byte_start;
  const size_t end_byte = example.answers[0].byte_end();
  if (!(offsets[first].first <= start_byte && offsets[last].second >= end_byte)) {
    return {cls_index, cls_index};
  }
  while (first < size && offsets[first].first <= start_byte) ++first;
  while (last >= 0 && offsets[last].second >= end_byte) --last;
  return {first - 1, last + 1};
}

std::vector<std::optional<std::pair<size_t, size_t>>> ContextOffsets(const Encoding& window) {
  std::vector<std::optional<std::pair<size_t, size_t>>> offsets(window.size());
  for (size_t k = 0; k < window.size(); ++k) {
    if (window.sequence_ids[k] == kContext) offsets[k] = window.offsets[k];
  }
  return offsets;
}

// Every example's windows (EncodeExample), on options.workers threads; the first error.
absl::StatusOr<std::vector<std::vector<Encoding>>> EncodeExamples(
    const Tokenizer& tokenizer, const std::vector<SquadExample>& examples,
    const QaFeatureOptions& options) {
  std::vector<absl::StatusOr<std::vector<Encoding>>> encoded =
      ParallelMap(examples.size(), options.workers,
                  [&](size_t i) { return EncodeExample(tokenizer, examples[i], options); });
  std::vector<std::vector<Encoding>> windows;
  windows.reserve(encoded.size());
  for (absl::StatusOr<std::vector<Encoding>>& example : encoded) {
    if (!example.ok()) return example.status();
    windows.push_back(*std::move(example));
  }
  return windows;
}

}  // namespace

absl::StatusOr<std::vector<QaTrainFeature>> PrepareTrainFeatures(
    const Tokenizer& tokenizer, const std::vector<SquadExample>& examples,
    const QaFeatureOptions& options) {
  ASSIGN_OR_RETURN(std::vector<std::vector<Encoding>> encoded,
                   EncodeExamples(tokenizer, examples, options));
  std::vector<QaTrainFeature> features;
  for (size_t i = 0; i < examples.size(); ++i) {
    for (Encoding& window : encoded[i]) {
      QaTrainFeature feature;
      feature.example_index = i;
      const int64_t cls_index = ClsIndex(tokenizer, window.ids);
      std::tie(feature.start_position, feature.end_position) =
          AnswerTokens(window, examples[i], cls_index);
      feature.inputs = ModelInputs(std::move(window));
      features.push_back(std::move(feature));
    }
  }
  return features;
}

absl::StatusOr<std::vector<QaEvalFeature>> PrepareValidationFeatures(
    const Tokenizer& tokenizer, const std::vector<SquadExample>& examples,
    const QaFeatureOptions& options) {
  ASSIGN_OR_RETURN(std::vector<std::vector<Encoding>> encoded,
                   EncodeExamples(tokenizer, examples, options));
  std::vector<QaEvalFeature> features;
  for (size_t i = 0; i < examples.size(); ++i) {
    for (Encoding& window : encoded[i]) {
      QaEvalFeature feature;
      feature.example_index = i;
      feature.example_id = examples[i].id;
      feature.offset_mapping = ContextOffsets(window);
      feature.inputs = ModelInputs(std::move(window));
      features.push_back(std::move(feature));
    }
  }
  return features;
}

}  // namespace lmtrain
