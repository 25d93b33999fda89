#include "common/internal/mlm_masking_checks.h"

#include "absl/strings/str_cat.h"
#include "common/mlm_masking.h"

namespace lmtrain::internal {
namespace {

// "0.9" for a value the file sets, "0.1, the default" for one it leaves out.
std::string Described(const std::optional<double>& set, double resolved) {
  return set ? FormatDouble(resolved) : absl::StrCat(FormatDouble(resolved), ", the default");
}

void CheckWholeWordKeys(YamlReader& r, const DataSpec& data) {
  const DataSpec defaults;
  if (!data.whole_word_masking) {
    for (const auto& [key, set] :
         {std::pair{"data.whole_word_selection",
                    data.whole_word_selection != defaults.whole_word_selection},
          std::pair{"data.wwm_probability", data.wwm_probability.has_value()}}) {
      if (set && !r.HasProblem(key)) {
        r.ReportAt(key, absl::StrCat(key, " needs data.whole_word_masking: true"));
      }
    }
    return;
  }
  if (data.wwm_probability && data.whole_word_selection == "fixed_count" &&
      !r.HasProblem("data.wwm_probability")) {
    r.ReportAt("data.wwm_probability",
               "data.wwm_probability applies to whole_word_selection: per_word; fixed_count "
               "masks whole words up to data.mlm_probability of the tokens");
  }
}

}  // namespace

void CheckMlmMasking(YamlReader& r, const DataSpec& data) {
  CheckWholeWordKeys(r, data);
  if (r.HasProblem("data.mask_replace_prob") || r.HasProblem("data.random_replace_prob")) return;
  const MlmMasking m = ResolveMlmMasking(data);
  if (m.mask_replace_prob + m.random_replace_prob <= 1.0) return;
  const char* key =
      data.random_replace_prob ? "data.random_replace_prob" : "data.mask_replace_prob";
  r.ReportAt(key,
             absl::StrCat("data.mask_replace_prob + data.random_replace_prob must be <= 1 (got ",
                          Described(data.mask_replace_prob, m.mask_replace_prob), " + ",
                          Described(data.random_replace_prob, m.random_replace_prob), ")"));
}

}  // namespace lmtrain::internal
