// Reads SQuAD data into SquadExamples, checking every answer against its context.
//
// Accepted forms (the format is chosen by SquadReadOptions::format):
//   * SQuAD v1.1 / v2.0 JSON: {"data": [{"title", "paragraphs": [{"context", "qas": [{"id",
//     "question", "answers": [{"text", "answer_start"}], "is_impossible" (v2),
//     "plausible_answers" (v2, ignored)}]}]}]}.
//   * The flattened records of Hugging Face datasets' squad / squad_v2 ({"id", "title",
//     "context", "question", "answers": {"text": [...], "answer_start": [...]}}), one per line
//     (JSON Lines), or as the array "data" of a JSON file (what run_qa.py's --train_file reads
//     with field="data"). Each element of "data" may be either form.
//
// answer_start is a Python character (code point) index into the context; it is converted to a
// UTF-8 byte offset, and context[answer_start : answer_start + len(text)] must equal the text.
// Ids must be strings (integers are accepted and written in decimal) and unique in the file;
// "title" may be missing (""). Contexts and questions are kept as they are: Hugging Face does
// not strip contexts, and its feature code strips only the question's left side.
//
// Hugging Face checks none of this (a wrong answer_start silently becomes a wrong label there);
// here a mismatch is an error. Skipped rather than rejected, as Hugging Face does:
// "plausible_answers" and any field not named above. Answers beyond the first are kept
// (evaluation uses them all, training only the first). A question without answers is an
// unanswerable v2 question, accepted only with version_2_with_negative.
//
// Errors (InvalidArgument unless said otherwise) name the file and the place: "file:line" for
// JSON Lines, "file: question id 'x' at data[i].paragraphs[j].qas[k]" for nested JSON and
// "file: data[i]" for flattened JSON. NotFound when the file cannot be opened.
//
// Thread safety: the functions keep no state.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "text/qa/squad_example.h"

namespace lmtrain {

enum class SquadFormat {
  kAuto,       // JSON Lines for names ending in .jsonl / .jsonlines, else JSON.
  kJson,       // One JSON document with "data".
  kJsonLines,  // One flattened record per line; blank lines are skipped.
};

struct SquadReadOptions {
  // false (default, SQuAD v1.1): every question needs at least one answer, and a nested
  // record with "is_impossible": true is an error. true (SQuAD v2.0): questions without
  // answers are unanswerable; in nested JSON "is_impossible", when present, must agree with
  // whether "answers" is empty.
  bool version_2_with_negative = false;
  SquadFormat format = SquadFormat::kAuto;  // Only ReadSquadFile looks at it.
};

// Reads the file at `path` (the format from options.format).
absl::StatusOr<std::vector<SquadExample>> ReadSquadFile(const std::string& path,
                                                        const SquadReadOptions& options = {});

// The same from text in memory; `source` names it in error messages.
absl::StatusOr<std::vector<SquadExample>> ParseSquadJson(std::string_view text,
                                                         const std::string& source,
                                                         const SquadReadOptions& options = {});
absl::StatusOr<std::vector<SquadExample>> ParseSquadJsonLines(std::string_view text,
                                                              const std::string& source,
                                                              const SquadReadOptions& options = {});

}  // namespace lmtrain
