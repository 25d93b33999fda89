// One sequence-classification example: a text or text pair with an optional label, as the GLUE
// processors' InputExample holds it, plus where it came from. Torch-free; a plain value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace lmtrain {

struct TextExample {
  // HF InputExample.guid: "<split>-<n>" ("train-3", "dev_matched-12", "test-0"), where <n> is the
  // file's index column or a row number exactly as the GLUE processors choose it.
  std::string guid;
  // The file's index/id column where the layout has one (GLUE test files always do); otherwise
  // the 0-based position of the example in its split. Submission files use it.
  std::string index;
  std::string text_a;
  std::optional<std::string> text_b;  // set for sentence-pair tasks
  // Classification: the class id (position in the label list). Unset for unlabelled rows (test
  // files) and for regression tasks.
  std::optional<int> label_id;
  // Regression: the target (float32, as HF casts it). Unset for unlabelled rows and for
  // classification tasks.
  std::optional<float> regression_label;
  int64_t line = 0;  // 1-based line of the source file where the row starts
};

}  // namespace lmtrain
