// Building blocks of the SQuAD reader: typed JSON field access with located errors, and the
// checks that turn one question's raw fields into a SquadExample. Thread-safe (no state).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "text/qa/squad_example.h"

namespace lmtrain::qa_internal {

// Where a record is, for error messages: `source` is "file" or "file:line", `path` the JSON
// path inside it ("data[0].paragraphs[1].qas[2]", or "" for a JSON Lines record).
struct RecordPlace {
  std::string source;
  std::string path;

  // "file: data[0]..." / "file:3", with "question id 'x'" when `id` is not empty.
  std::string Describe(const std::string& id = "") const;
};

// One answer as the file gives it, before checking.
struct RawAnswer {
  std::string text;
  int64_t answer_start = 0;
};

// The raw fields of one question.
struct RawQuestion {
  std::string id;
  std::string title;
  std::string context;
  std::string question;
  std::vector<RawAnswer> answers;
  std::optional<bool> is_impossible;  // Only nested v2 JSON has it.
};

// `object[key]` as a string. Missing: `fallback` when given, else InvalidArgument. Any other
// type: InvalidArgument. Errors start with place.Describe(id).
absl::StatusOr<std::string> StringField(const nlohmann::json& object, const char* key,
                                        const RecordPlace& place, const std::string& id,
                                        std::optional<std::string> fallback = std::nullopt);
// "id": a string, or an integer written in decimal.
absl::StatusOr<std::string> IdField(const nlohmann::json& object, const RecordPlace& place);
// `object[key]` as an array (InvalidArgument when missing or another type).
absl::StatusOr<const nlohmann::json*> ArrayField(const nlohmann::json& object, const char* key,
                                                 const RecordPlace& place, const std::string& id);
// A non-negative integer answer_start.
absl::StatusOr<int64_t> AnswerStart(const nlohmann::json& value, const RecordPlace& place,
                                    const std::string& id, const std::string& field);

// Checks `raw` (answers against the context, v1/v2 rules; see squad_reader.h) and converts
// answer starts to byte offsets.
absl::StatusOr<SquadExample> BuildExample(RawQuestion raw, bool version_2_with_negative,
                                          const RecordPlace& place);

}  // namespace lmtrain::qa_internal
