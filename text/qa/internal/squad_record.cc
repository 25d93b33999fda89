#include "text/qa/internal/squad_record.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "text/qa/internal/char_offsets.h"

namespace lmtrain::qa_internal {
namespace {

using Json = nlohmann::json;

const char* TypeName(const Json& value) { return value.type_name(); }

// At most `max_bytes` of `text` from `begin`, cut back to a code point boundary, for messages.
std::string Excerpt(const std::string& text, size_t begin, size_t max_bytes) {
  if (begin >= text.size()) return "";
  size_t end = std::min(text.size(), begin + max_bytes);
  while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(begin, end - begin);
}

absl::Status CheckAnswer(const RawAnswer& answer, size_t index, const std::string& context,
                         const std::string& where, SquadAnswer* out) {
  const std::string name = absl::StrCat("answers[", index, "]");
  if (answer.text.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": ", name, ": the answer text is empty"));
  }
  const std::optional<size_t> byte_start = CodePointToByteOffset(context, answer.answer_start);
  if (!byte_start.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": ", name, ": answer_start ", answer.answer_start,
                     " is past the end of the context (", CodePointCount(context), " characters)"));
  }
  if (context.compare(*byte_start, answer.text.size(), answer.text) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": ", name, ": the text '", answer.text, "' is not in the context at answer_start ",
        answer.answer_start, " (the context has '",
        Excerpt(context, *byte_start, answer.text.size()), "' there)"));
  }
  out->text = answer.text;
  out->answer_start = answer.answer_start;
  out->byte_start = *byte_start;
  return absl::OkStatus();
}

absl::Status CheckAnswerCount(const RawQuestion& raw, bool version_2_with_negative,
                              const std::string& where) {
  if (raw.is_impossible.value_or(false) && !version_2_with_negative) {
    return absl::InvalidArgumentError(
        absl::StrCat(where,
                     ": is_impossible is true, but the data is read as SQuAD v1.1 (set "
                     "version_2_with_negative for SQuAD v2.0 data)"));
  }
  if (raw.is_impossible.has_value() && *raw.is_impossible != raw.answers.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": is_impossible is ", *raw.is_impossible ? "true" : "false",
                     " but there are ", raw.answers.size(), " answers"));
  }
  if (raw.answers.empty() && !version_2_with_negative) {
    return absl::InvalidArgumentError(
        absl::StrCat(where,
                     ": the question has no answer; only SQuAD v2.0 data (read with "
                     "version_2_with_negative) may have unanswerable questions"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string RecordPlace::Describe(const std::string& id) const {
  if (path.empty()) return id.empty() ? source : absl::StrCat(source, ": question id '", id, "'");
  if (id.empty()) return absl::StrCat(source, ": ", path);
  return absl::StrCat(source, ": question id '", id, "' at ", path);
}

absl::StatusOr<std::string> StringField(const Json& object, const char* key,
                                        const RecordPlace& place, const std::string& id,
                                        std::optional<std::string> fallback) {
  const auto it = object.find(key);
  if (it == object.end() || (fallback.has_value() && it->is_null())) {
    if (fallback.has_value()) return *std::move(fallback);
    return absl::InvalidArgumentError(
        absl::StrCat(place.Describe(id), ": missing string field '", key, "'"));
  }
  if (!it->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(place.Describe(id), ": field '", key,
                                                   "' must be a string (got ", TypeName(*it), ")"));
  }
  return it->get<std::string>();
}

absl::StatusOr<std::string> IdField(const Json& object, const RecordPlace& place) {
  const auto it = object.find("id");
  if (it != object.end() && it->is_number_integer()) return it->dump();
  return StringField(object, "id", place, "");
}

absl::StatusOr<const Json*> ArrayField(const Json& object, const char* key,
                                       const RecordPlace& place, const std::string& id) {
  const auto it = object.find(key);
  if (it == object.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(place.Describe(id), ": missing array field '", key, "'"));
  }
  if (!it->is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(place.Describe(id), ": field '", key,
                                                   "' must be an array (got ", TypeName(*it), ")"));
  }
  return &*it;
}

absl::StatusOr<int64_t> AnswerStart(const Json& value, const RecordPlace& place,
                                    const std::string& id, const std::string& field) {
  if (value.is_number_unsigned()) {
    const uint64_t start = value.get<uint64_t>();
    if (start <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(start);
  } else if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    return value.get<int64_t>();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      place.Describe(id), ": ", field, " must be a non-negative integer (got ", value.dump(), ")"));
}

absl::StatusOr<SquadExample> BuildExample(RawQuestion raw, bool version_2_with_negative,
                                          const RecordPlace& place) {
  const std::string where = place.Describe(raw.id);
  RETURN_IF_ERROR(CheckAnswerCount(raw, version_2_with_negative, where));
  SquadExample example;
  example.answers.resize(raw.answers.size());
  for (size_t i = 0; i < raw.answers.size(); ++i) {
    RETURN_IF_ERROR(CheckAnswer(raw.answers[i], i, raw.context, where, &example.answers[i]));
  }
  example.id = std::move(raw.id);
  example.title = std::move(raw.title);
  example.context = std::move(raw.context);
  example.question = std::move(raw.question);
  return example;
}

}  // namespace lmtrain::qa_internal
