// SquadExample: one SQuAD question with its paragraph, as Hugging Face datasets' "squad" and
// "squad_v2" builders yield it (id, title, context, question, answers), plus each answer's
// UTF-8 byte range in the context. Plain values; no thread-safety concerns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lmtrain {

struct SquadAnswer {
  std::string text;          // Never empty.
  int64_t answer_start = 0;  // As in the file: a Python (code point) index into the context.
  size_t byte_start = 0;     // The same position as a UTF-8 byte offset into the context.
  // One past the answer's last byte: context.substr(byte_start, text.size()) == text.
  size_t byte_end() const { return byte_start + text.size(); }
};

struct SquadExample {
  std::string id;        // Unique within a file.
  std::string title;     // "" when the file has none.
  std::string context;   // As in the file (not stripped).
  std::string question;  // As in the file; features strip its left white space.
  // Gold answers in file order. The first is the training target; evaluation takes the best
  // over all. Empty: an unanswerable SQuAD v2 question (plausible_answers are not kept).
  std::vector<SquadAnswer> answers;

  bool is_impossible() const { return answers.empty(); }
};

}  // namespace lmtrain
