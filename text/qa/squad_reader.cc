#include "text/qa/squad_reader.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "text/qa/internal/squad_record.h"

namespace lmtrain {
namespace {

using Json = nlohmann::json;
using qa_internal::RawAnswer;
using qa_internal::RawQuestion;
using qa_internal::RecordPlace;

// Examples with the place each came from (for the duplicate-id message).
struct Collected {
  std::vector<SquadExample> examples;
  std::vector<std::string> places;
};

absl::StatusOr<Json> ParseJson(std::string_view text, const std::string& where) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": invalid JSON: ", e.what()));
  }
}

absl::Status RequireObject(const Json& value, const RecordPlace& place) {
  if (value.is_object()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(place.Describe(), ": expected an object (got ", value.type_name(), ")"));
}

// HF datasets' flattened answers: {"text": [...], "answer_start": [...]}.
absl::StatusOr<std::vector<RawAnswer>> FlatAnswers(const Json& record, const RecordPlace& place,
                                                   const std::string& id) {
  const auto it = record.find("answers");
  if (it == record.end() || !it->is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(place.Describe(id),
                     ": field 'answers' must be an object {\"text\": [...], "
                     "\"answer_start\": [...]}"));
  }
  ASSIGN_OR_RETURN(const Json* texts, qa_internal::ArrayField(*it, "text", place, id));
  ASSIGN_OR_RETURN(const Json* starts, qa_internal::ArrayField(*it, "answer_start", place, id));
  if (texts->size() != starts->size()) {
    return absl::InvalidArgumentError(absl::StrCat(place.Describe(id), ": answers has ",
                                                   texts->size(), " texts but ", starts->size(),
                                                   " answer_start values"));
  }
  std::vector<RawAnswer> answers(texts->size());
  for (size_t i = 0; i < answers.size(); ++i) {
    if (!(*texts)[i].is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat(place.Describe(id), ": answers.text[", i, "] must be a string"));
    }
    answers[i].text = (*texts)[i].get<std::string>();
    ASSIGN_OR_RETURN(answers[i].answer_start,
                     qa_internal::AnswerStart((*starts)[i], place, id,
                                              absl::StrCat("answers.answer_start[", i, "]")));
  }
  return answers;
}

absl::StatusOr<SquadExample> FlatRecord(const Json& record, const RecordPlace& place,
                                        const SquadReadOptions& options) {
  RETURN_IF_ERROR(RequireObject(record, place));
  RawQuestion raw;
  ASSIGN_OR_RETURN(raw.id, qa_internal::IdField(record, place));
  ASSIGN_OR_RETURN(raw.title, qa_internal::StringField(record, "title", place, raw.id, ""));
  ASSIGN_OR_RETURN(raw.context, qa_internal::StringField(record, "context", place, raw.id));
  ASSIGN_OR_RETURN(raw.question, qa_internal::StringField(record, "question", place, raw.id));
  ASSIGN_OR_RETURN(raw.answers, FlatAnswers(record, place, raw.id));
  return qa_internal::BuildExample(std::move(raw), options.version_2_with_negative, place);
}

// SQuAD's nested answers: [{"text", "answer_start"}, ...].
absl::StatusOr<std::vector<RawAnswer>> NestedAnswers(const Json& qa, const RecordPlace& place,
                                                     const std::string& id) {
  ASSIGN_OR_RETURN(const Json* list, qa_internal::ArrayField(qa, "answers", place, id));
  std::vector<RawAnswer> answers(list->size());
  for (size_t i = 0; i < answers.size(); ++i) {
    const Json& answer = (*list)[i];
    const std::string name = absl::StrCat("answers[", i, "]");
    if (!answer.is_object() || !answer.contains("answer_start")) {
      return absl::InvalidArgumentError(absl::StrCat(
          place.Describe(id), ": ", name, " must be an object with 'text' and 'answer_start'"));
    }
    RecordPlace answer_place{place.source, absl::StrCat(place.path, ".", name)};
    ASSIGN_OR_RETURN(answers[i].text, qa_internal::StringField(answer, "text", answer_place, id));
    ASSIGN_OR_RETURN(answers[i].answer_start,
                     qa_internal::AnswerStart(answer["answer_start"], place, id,
                                              absl::StrCat(name, ".answer_start")));
  }
  return answers;
}

absl::StatusOr<std::optional<bool>> IsImpossible(const Json& qa, const RecordPlace& place,
                                                 const std::string& id) {
  const auto it = qa.find("is_impossible");
  if (it == qa.end()) return std::optional<bool>();
  if (!it->is_boolean()) {
    return absl::InvalidArgumentError(
        absl::StrCat(place.Describe(id), ": field 'is_impossible' must be true or false"));
  }
  return std::optional<bool>(it->get<bool>());
}

absl::StatusOr<SquadExample> NestedQuestion(const Json& qa, const std::string& title,
                                            const std::string& context, const RecordPlace& place,
                                            const SquadReadOptions& options) {
  RETURN_IF_ERROR(RequireObject(qa, place));
  RawQuestion raw;
  ASSIGN_OR_RETURN(raw.id, qa_internal::IdField(qa, place));
  raw.title = title;
  raw.context = context;
  ASSIGN_OR_RETURN(raw.question, qa_internal::StringField(qa, "question", place, raw.id));
  ASSIGN_OR_RETURN(raw.answers, NestedAnswers(qa, place, raw.id));
  ASSIGN_OR_RETURN(raw.is_impossible, IsImpossible(qa, place, raw.id));
  return qa_internal::BuildExample(std::move(raw), options.version_2_with_negative, place);
}

absl::Status NestedParagraph(const Json& paragraph, const std::string& title,
                             const RecordPlace& place, const SquadReadOptions& options,
                             Collected* out) {
  RETURN_IF_ERROR(RequireObject(paragraph, place));
  ASSIGN_OR_RETURN(const std::string context,
                   qa_internal::StringField(paragraph, "context", place, ""));
  ASSIGN_OR_RETURN(const Json* qas, qa_internal::ArrayField(paragraph, "qas", place, ""));
  for (size_t k = 0; k < qas->size(); ++k) {
    RecordPlace qa_place{place.source, absl::StrCat(place.path, ".qas[", k, "]")};
    ASSIGN_OR_RETURN(SquadExample example,
                     NestedQuestion((*qas)[k], title, context, qa_place, options));
    out->places.push_back(qa_place.Describe(example.id));
    out->examples.push_back(std::move(example));
  }
  return absl::OkStatus();
}

absl::Status NestedArticle(const Json& article, const RecordPlace& place,
                           const SquadReadOptions& options, Collected* out) {
  ASSIGN_OR_RETURN(const std::string title,
                   qa_internal::StringField(article, "title", place, "", ""));
  ASSIGN_OR_RETURN(const Json* paragraphs,
                   qa_internal::ArrayField(article, "paragraphs", place, ""));
  for (size_t j = 0; j < paragraphs->size(); ++j) {
    RecordPlace paragraph_place{place.source, absl::StrCat(place.path, ".paragraphs[", j, "]")};
    RETURN_IF_ERROR(NestedParagraph((*paragraphs)[j], title, paragraph_place, options, out));
  }
  return absl::OkStatus();
}

// One element of "data": a nested article, or a flattened record.
absl::Status DataElement(const Json& element, const RecordPlace& place,
                         const SquadReadOptions& options, Collected* out) {
  RETURN_IF_ERROR(RequireObject(element, place));
  if (element.contains("paragraphs")) return NestedArticle(element, place, options, out);
  ASSIGN_OR_RETURN(SquadExample example, FlatRecord(element, place, options));
  out->places.push_back(place.Describe(example.id));
  out->examples.push_back(std::move(example));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<SquadExample>> CheckUniqueIds(Collected collected,
                                                         const std::string& source) {
  absl::flat_hash_map<std::string, size_t> first_seen;
  for (size_t i = 0; i < collected.examples.size(); ++i) {
    const auto [it, inserted] = first_seen.emplace(collected.examples[i].id, i);
    if (!inserted) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": question id '", collected.examples[i].id, "' appears twice (",
                       collected.places[it->second], "; ", collected.places[i], ")"));
    }
  }
  return std::move(collected.examples);
}

}  // namespace

absl::StatusOr<std::vector<SquadExample>> ParseSquadJson(std::string_view text,
                                                         const std::string& source,
                                                         const SquadReadOptions& options) {
  ASSIGN_OR_RETURN(const Json root, ParseJson(text, source));
  const RecordPlace root_place{source, ""};
  if (!root.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": expected a JSON object with a \"data\" array (got ", root.type_name(), ")"));
  }
  ASSIGN_OR_RETURN(const Json* data, qa_internal::ArrayField(root, "data", root_place, ""));
  Collected collected;
  for (size_t i = 0; i < data->size(); ++i) {
    RETURN_IF_ERROR(DataElement((*data)[i], RecordPlace{source, absl::StrCat("data[", i, "]")},
                                options, &collected));
  }
  return CheckUniqueIds(std::move(collected), source);
}

absl::StatusOr<std::vector<SquadExample>> ParseSquadJsonLines(std::string_view text,
                                                              const std::string& source,
                                                              const SquadReadOptions& options) {
  Collected collected;
  size_t line_number = 0;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const RecordPlace place{absl::StrCat(source, ":", line_number), ""};
    ASSIGN_OR_RETURN(const Json record, ParseJson(line, place.source));
    ASSIGN_OR_RETURN(SquadExample example, FlatRecord(record, place, options));
    collected.places.push_back(place.Describe(example.id));
    collected.examples.push_back(std::move(example));
  }
  return CheckUniqueIds(std::move(collected), source);
}

absl::StatusOr<std::vector<SquadExample>> ReadSquadFile(const std::string& path,
                                                        const SquadReadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open SQuAD file ", path));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return absl::InternalError(absl::StrCat("cannot read SQuAD file ", path));
  SquadFormat format = options.format;
  if (format == SquadFormat::kAuto) {
    const bool lines = absl::EndsWith(path, ".jsonl") || absl::EndsWith(path, ".jsonlines");
    format = lines ? SquadFormat::kJsonLines : SquadFormat::kJson;
  }
  if (format == SquadFormat::kJsonLines) return ParseSquadJsonLines(contents.str(), path, options);
  return ParseSquadJson(contents.str(), path, options);
}

}  // namespace lmtrain
