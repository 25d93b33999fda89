// The masking an mlm job's data section asks for, with its defaults resolved (docs/tasks.md):
// which tokens are selected, and what a selected token becomes. The trainer builds its masker
// from this, and the job-file checks validate the same resolved values.
// Thread-safe: a pure function.
#pragma once

#include "common/job_spec.h"

namespace lmtrain {

struct MlmMasking {
  // Token level: each non-special token with this probability. Whole words, per_word: each
  // word with it (wwm_probability, else mlm_probability); fixed_count: the share of tokens.
  double probability = 0.15;
  bool whole_word = false;
  bool fixed_count = false;  // whole_word_selection: fixed_count.
  double mask_replace_prob = 0.8;
  double random_replace_prob = 0.1;
};

MlmMasking ResolveMlmMasking(const DataSpec& data);

}  // namespace lmtrain
