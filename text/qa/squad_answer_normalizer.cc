#include "text/qa/squad_answer_normalizer.h"

#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include "absl/strings/str_join.h"
#include "text/qa/internal/python_text.h"

namespace lmtrain {
namespace {

// Python's string.punctuation.
constexpr std::string_view kPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

std::string Lower(std::string_view text) {
  icu::UnicodeString unicode = icu::UnicodeString::fromUTF8(
      icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
  std::string lowered;
  unicode.toLower(icu::Locale::getRoot()).toUTF8String(lowered);
  return lowered;
}

std::string RemovePunctuation(std::string_view text) {
  std::string kept;
  kept.reserve(text.size());
  for (const char c : text) {
    if (kPunctuation.find(c) == std::string_view::npos) kept.push_back(c);
  }
  return kept;
}

// Python's \w for str: str.isalnum() (letters and numbers) or '_'.
bool IsWordChar(char32_t c) {
  if (c == U'_') return true;
  return (U_MASK(u_charType(static_cast<UChar32>(c))) & (U_GC_L_MASK | U_GC_N_MASK)) != 0;
}

bool IsArticle(std::string_view word) { return word == "a" || word == "an" || word == "the"; }

std::string RemoveArticles(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    size_t next = pos;
    if (!IsWordChar(qa_internal::NextCodePoint(text, &next))) {
      out.append(text.substr(pos, next - pos));
      pos = next;
      continue;
    }
    size_t word_end = next;  // The whole run of word characters from pos.
    while (word_end < text.size()) {
      size_t after = word_end;
      if (!IsWordChar(qa_internal::NextCodePoint(text, &after))) break;
      word_end = after;
    }
    const std::string_view word = text.substr(pos, word_end - pos);
    if (IsArticle(word)) {
      out.push_back(' ');
    } else {
      out.append(word);
    }
    pos = word_end;
  }
  return out;
}

}  // namespace

std::string NormalizeSquadAnswer(std::string_view text) {
  return absl::StrJoin(SquadAnswerTokens(text), " ");
}

std::vector<std::string> SquadAnswerTokens(std::string_view text) {
  return qa_internal::SplitPython(RemoveArticles(RemovePunctuation(Lower(text))));
}

}  // namespace lmtrain
