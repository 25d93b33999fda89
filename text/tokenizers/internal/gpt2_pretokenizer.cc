// A hand-written matcher for the GPT-2 regex: the alternatives are tried in
// order at each position, over a decoded array of characters, with no
// backtracking beyond what the alternatives need (the optional leading space,
// and the one-character give-back of \s+(?!\S)).
#include "text/tokenizers/internal/gpt2_pretokenizer.h"

#include <cstddef>

#include "text/tokenizers/internal/unicode_text.h"

namespace lmtrain::tokenizers_internal {
namespace {

struct Char {
  size_t begin;  // Byte offset in the text.
  char32_t code_point;
  CharClass cls;
};

std::vector<Char> DecodeAll(std::string_view text) {
  std::vector<Char> chars;
  chars.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const DecodedChar c = DecodeUtf8At(text, pos);
    chars.push_back({pos, c.code_point, ClassifyCodePoint(c.code_point)});
    pos += c.length;
  }
  return chars;
}

class Matcher {
 public:
  explicit Matcher(const std::vector<Char>& chars) : chars_(chars) {}

  // End (exclusive, in characters) of the match starting at `i`; always > i.
  size_t MatchAt(size_t i) const {
    if (size_t end = Contraction(i)) return end;
    for (CharClass cls :
         {CharClass::kLetter, CharClass::kNumber, CharClass::kOther}) {
      if (size_t end = SpaceThenRun(i, cls)) return end;
    }
    return Whitespace(i);
  }

 private:
  bool Is(size_t i, char32_t c) const {
    return i < chars_.size() && chars_[i].code_point == c;
  }
  bool IsClass(size_t i, CharClass cls) const {
    return i < chars_.size() && chars_[i].cls == cls;
  }

  // 's|'t|'re|'ve|'m|'ll|'d
  size_t Contraction(size_t i) const {
    if (!Is(i, U'\'')) return 0;
    if (Is(i + 1, U's') || Is(i + 1, U't') || Is(i + 1, U'm') ||
        Is(i + 1, U'd'))
      return i + 2;
    if ((Is(i + 1, U'r') || Is(i + 1, U'v')) && Is(i + 2, U'e')) return i + 3;
    if (Is(i + 1, U'l') && Is(i + 2, U'l')) return i + 3;
    return 0;
  }

  // ` ?X+` for X one of \p{L}, \p{N}, [^\s\p{L}\p{N}]; 0 when it does not match
  // at `i`.
  size_t SpaceThenRun(size_t i, CharClass cls) const {
    size_t start = i;
    if (Is(i, U' ') && IsClass(i + 1, cls)) {
      start = i + 1;
    } else if (!IsClass(i, cls)) {
      return 0;
    }
    size_t end = start;
    while (IsClass(end, cls)) ++end;
    return end;
  }

  // \s+(?!\S)|\s+ : a whitespace run gives its last character to a following
  // non-space, unless the run is that single character. Reached only on
  // whitespace (the other classes matched).
  size_t Whitespace(size_t i) const {
    size_t end = i;
    while (IsClass(end, CharClass::kWhitespace)) ++end;
    if (end == chars_.size() || end - i == 1) return end;
    return end - 1;
  }

  const std::vector<Char>& chars_;
};

}  // namespace

std::vector<std::string_view> SplitGpt2Words(std::string_view text) {
  const std::vector<Char> chars = DecodeAll(text);
  const Matcher matcher(chars);
  std::vector<std::string_view> words;
  for (size_t i = 0; i < chars.size();) {
    const size_t end = matcher.MatchAt(i);
    const size_t byte_end = end < chars.size() ? chars[end].begin : text.size();
    words.push_back(text.substr(chars[i].begin, byte_end - chars[i].begin));
    i = end;
  }
  return words;
}

}  // namespace lmtrain::tokenizers_internal
