// Job-file checks of the mlm masking keys that span keys (each key's own range is checked by
// its row in job_spec_fields.cc). Private to common/.
#pragma once

#include "common/internal/yaml_reader.h"
#include "common/job_spec.h"

namespace lmtrain::internal {

// For task mlm: whole_word_selection and wwm_probability need whole_word_masking: true;
// wwm_probability applies to per_word only; the resolved mask_replace_prob +
// random_replace_prob must be <= 1. Problems are reported at the offending key's line.
void CheckMlmMasking(YamlReader& r, const DataSpec& data);

}  // namespace lmtrain::internal
