// A purpose-built parser rather than nlohmann::json: it reports the line of
// every problem, and JSON objects with duplicate keys (a silent overwrite in
// general-purpose parsers) are an error.
#include "text/tokenizers/internal/vocab_json.h"

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "text/tokenizers/internal/absl_view.h"
#include "text/tokenizers/internal/unicode_text.h"

namespace lmtrain::tokenizers_internal {
namespace {

class VocabParser {
 public:
  VocabParser(std::string_view text, std::string_view file_name)
      : text_(text), file_name_(file_name) {}

  absl::StatusOr<std::vector<std::string>> Parse();

 private:
  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(AbslView(file_name_), ":", line_, ": ", AbslView(what)));
  }
  void SkipSpace();
  absl::Status Expect(char c);
  absl::StatusOr<std::string> ParseString();
  absl::Status ParseEscape(std::string* out);
  absl::StatusOr<uint32_t> ParseHex4();
  absl::StatusOr<int> ParseId();
  absl::Status AddEntry(std::string token, int id);

  std::string_view text_;
  std::string_view file_name_;
  size_t pos_ = 0;
  int line_ = 1;
  absl::flat_hash_map<std::string, int> ids_;
  std::vector<std::string> tokens_;
};

void VocabParser::SkipSpace() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == '\n') ++line_;
    if (c != ' ' && c != '\n' && c != '\t' && c != '\r') return;
    ++pos_;
  }
}

absl::Status VocabParser::Expect(char c) {
  SkipSpace();
  if (pos_ >= text_.size()) {
    return Error(absl::StrCat("unexpected end of file, wanted '",
                              std::string(1, c), "'"));
  }
  if (text_[pos_] != c) {
    return Error(absl::StrCat("found '", std::string(1, text_[pos_]),
                              "' where '", std::string(1, c), "' belongs"));
  }
  ++pos_;
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> VocabParser::ParseHex4() {
  if (pos_ + 4 > text_.size()) return Error("truncated \\u escape");
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) {
    const char c = text_[pos_++];
    value <<= 4;
    if (c >= '0' && c <= '9')
      value |= c - '0';
    else if (c >= 'a' && c <= 'f')
      value |= c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      value |= c - 'A' + 10;
    else
      return Error("bad hex digit in \\u escape");
  }
  return value;
}

absl::Status VocabParser::ParseEscape(std::string* out) {
  if (pos_ >= text_.size()) return Error("unterminated string");
  const char c = text_[pos_++];
  switch (c) {
    case '"':
    case '\\':
    case '/':
      out->push_back(c);
      return absl::OkStatus();
    case 'b':
      out->push_back('\b');
      return absl::OkStatus();
    case 'f':
      out->push_back('\f');
      return absl::OkStatus();
    case 'n':
      out->push_back('\n');
      return absl::OkStatus();
    case 'r':
      out->push_back('\r');
      return absl::OkStatus();
    case 't':
      out->push_back('\t');
      return absl::OkStatus();
    case 'u':
      break;
    default:
      return Error(absl::StrCat("bad escape '\\", std::string(1, c), "'"));
  }
  ASSIGN_OR_RETURN(uint32_t unit, ParseHex4());
  if (unit >= 0xDC00 && unit <= 0xDFFF)
    return Error("unpaired low surrogate in \\u escape");
  if (unit >= 0xD800 && unit <= 0xDBFF) {
    if (text_.substr(pos_, 2) != "\\u")
      return Error("unpaired high surrogate in \\u escape");
    pos_ += 2;
    ASSIGN_OR_RETURN(uint32_t low, ParseHex4());
    if (low < 0xDC00 || low > 0xDFFF)
      return Error("unpaired high surrogate in \\u escape");
    unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
  }
  AppendUtf8(unit, out);
  return absl::OkStatus();
}

absl::StatusOr<std::string> VocabParser::ParseString() {
  RETURN_IF_ERROR(Expect('"'));
  std::string out;
  while (true) {
    if (pos_ >= text_.size()) return Error("unterminated string");
    const char c = text_[pos_++];
    if (c == '"') return out;
    if (c == '\\') {
      RETURN_IF_ERROR(ParseEscape(&out));
    } else if (static_cast<unsigned char>(c) < 0x20) {
      return Error("raw control character inside a string");
    } else {
      out.push_back(c);
    }
  }
}

absl::StatusOr<int> VocabParser::ParseId() {
  SkipSpace();
  int64_t value = 0;
  size_t digits = 0;
  while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
    value = value * 10 + (text_[pos_++] - '0');
    if (++digits > 9) break;
  }
  const bool more =
      pos_ < text_.size() && (text_[pos_] == '.' || text_[pos_] == 'e' ||
                              text_[pos_] == 'E' || text_[pos_] == '-');
  if (digits == 0 || more || value > kMaxVocabId) {
    return Error(
        absl::StrCat("token id must be an integer in [0, ", kMaxVocabId, "]"));
  }
  return static_cast<int>(value);
}

absl::Status VocabParser::AddEntry(std::string token, int id) {
  if (token.empty()) return Error("empty token");
  if (ToValidUtf8(token) != token) return Error("token is not valid UTF-8");
  if (ids_.contains(token)) {
    return Error(absl::StrCat("token \"", token, "\" appears twice (ids ",
                              ids_[token], " and ", id, ")"));
  }
  if (static_cast<size_t>(id) >= tokens_.size()) tokens_.resize(id + 1);
  if (!tokens_[id].empty()) {
    return Error(absl::StrCat("id ", id, " is given to both \"", tokens_[id],
                              "\" and \"", token, "\""));
  }
  tokens_[id] = token;
  ids_.emplace(std::move(token), id);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> VocabParser::Parse() {
  SkipSpace();
  if (pos_ >= text_.size() || text_[pos_] != '{') {
    return Error("not a JSON object of token -> id");
  }
  ++pos_;
  SkipSpace();
  bool first = true;
  while (pos_ < text_.size() && text_[pos_] != '}') {
    if (!first) RETURN_IF_ERROR(Expect(','));
    first = false;
    ASSIGN_OR_RETURN(std::string token, ParseString());
    RETURN_IF_ERROR(Expect(':'));
    ASSIGN_OR_RETURN(int id, ParseId());
    RETURN_IF_ERROR(AddEntry(std::move(token), id));
    SkipSpace();
  }
  RETURN_IF_ERROR(Expect('}'));
  SkipSpace();
  if (pos_ != text_.size()) return Error("content after the closing '}'");
  if (tokens_.empty()) return Error("the vocabulary is empty");
  return std::move(tokens_);
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseVocabJson(
    std::string_view text, std::string_view file_name) {
  return VocabParser(text, file_name).Parse();
}

}  // namespace lmtrain::tokenizers_internal
