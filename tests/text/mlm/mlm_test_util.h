// Values and helpers shared by the masking tests.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "text/mlm/mlm_examples.h"
#include "text/mlm/mlm_masker.h"

namespace lmtrain {
namespace testing_internal {

inline constexpr int32_t kMask = 103;     // bert-base-uncased's [MASK].
inline constexpr int32_t kVocab = 30522;  // bert-base-uncased's vocabulary size.
inline constexpr int32_t N = kNoWord;     // The word id of a special token, short for tables.

// masker.Mask(example); a failed test (and an empty example) when it fails.
inline MaskedExample MaskOrDie(const MlmMasker& masker, const MlmExample& example,
                               RandomSource& source) {
  absl::StatusOr<MaskedExample> masked = masker.Mask(ViewOf(example), source);
  EXPECT_TRUE(masked.ok()) << masked.status();
  return masked.value_or(MaskedExample());
}

}  // namespace testing_internal
}  // namespace lmtrain
