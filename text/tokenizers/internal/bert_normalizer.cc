#include "text/tokenizers/internal/bert_normalizer.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "text/tokenizers/internal/bert_pretokenizer.h"

namespace lmtrain::tokenizers_internal {
namespace {

using Changes = std::vector<std::pair<char32_t, int>>;

// unicode_categories' is_other(): Cc, Cf or Co (not Cn, not Cs).
bool IsControl(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  if (c < 0x80) return c < 0x20 || c == 0x7F;  // ASCII Cc.
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_CONTROL_CHAR:
    case U_FORMAT_CHAR:
    case U_PRIVATE_USE_CHAR:
      return true;
    default:
      return false;
  }
}

void CleanText(NormalizedText* text) {
  text->Filter([](char32_t c) { return !(c == 0 || c == 0xFFFD || IsControl(c)); });
  for (char32_t& c : text->chars) {
    if (IsBertWhitespace(c)) c = ' ';
  }
}

void HandleChineseChars(NormalizedText* text) {
  if (std::none_of(text->chars.begin(), text->chars.end(), IsChineseChar)) return;
  Changes changes;
  for (char32_t c : text->chars) {
    if (IsChineseChar(c)) {
      changes.insert(changes.end(), {{U' ', 1}, {c, 0}, {U' ', 1}});
    } else {
      changes.emplace_back(c, 0);
    }
  }
  text->Transform(changes);
}

const UNormalizer2* Nfd() {
  UErrorCode error = U_ZERO_ERROR;
  static const UNormalizer2* const nfd = unorm2_getNFDInstance(&error);
  return nfd;
}

// Canonical decomposition of `c` (itself when it has none).
std::u32string Decompose(char32_t c) {
  UChar buffer[32];
  UErrorCode error = U_ZERO_ERROR;
  const int32_t length =
      unorm2_getDecomposition(Nfd(), static_cast<UChar32>(c), buffer, 32, &error);
  if (length < 0 || U_FAILURE(error)) return std::u32string(1, c);
  std::u32string out;
  for (int32_t i = 0; i < length;) {
    UChar32 cp;
    U16_NEXT(buffer, i, length, cp);
    out.push_back(static_cast<char32_t>(cp));
  }
  return out;
}

// NFD as (char, change) pairs: a decomposition's first character replaces the
// original, the rest are inserted; combining marks are then put in canonical
// order (a stable sort by combining class within each run of marks), their
// changes travelling with them.
Changes NfdChanges(const std::u32string& chars) {
  Changes changes;
  changes.reserve(chars.size());
  for (char32_t c : chars) {
    const std::u32string d = c < 0xC0 ? std::u32string(1, c) : Decompose(c);
    for (size_t i = 0; i < d.size(); ++i) changes.emplace_back(d[i], i > 0);
  }
  auto ccc = [](const std::pair<char32_t, int>& x) {
    return u_getCombiningClass(static_cast<UChar32>(x.first));
  };
  for (size_t i = 0; i < changes.size();) {
    size_t j = i;
    while (j < changes.size() && ccc(changes[j]) != 0) ++j;
    if (j - i > 1) {
      std::stable_sort(changes.begin() + i, changes.begin() + j,
                       [&](const auto& a, const auto& b) { return ccc(a) < ccc(b); });
    }
    i = j == i ? i + 1 : j;
  }
  return changes;
}

void StripAccents(NormalizedText* text) {
  const bool ascii =
      std::all_of(text->chars.begin(), text->chars.end(), [](char32_t c) { return c < 0x80; });
  if (ascii) return;
  text->Transform(NfdChanges(text->chars));
  text->Filter(
      [](char32_t c) { return u_charType(static_cast<UChar32>(c)) != U_NON_SPACING_MARK; });
}

void Lowercase(NormalizedText* text) {
  const bool has_dotted_i =
      std::find(text->chars.begin(), text->chars.end(), U'\u0130') != text->chars.end();
  if (!has_dotted_i) {
    for (char32_t& c : text->chars) {
      c = c < 0x80 ? (c >= 'A' && c <= 'Z' ? c + 32 : c)
                   : static_cast<char32_t>(u_tolower(static_cast<UChar32>(c)));
    }
    return;
  }
  // U+0130's full lowercase mapping is two characters (SpecialCasing.txt).
  Changes changes;
  for (char32_t c : text->chars) {
    if (c == U'\u0130') {
      changes.insert(changes.end(), {{U'i', 0}, {U'\u0307', 1}});
    } else {
      changes.emplace_back(static_cast<char32_t>(u_tolower(static_cast<UChar32>(c))), 0);
    }
  }
  text->Transform(changes);
}

}  // namespace

bool IsChineseChar(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

void BertNormalize(const BertNormalizerOptions& options, NormalizedText* text) {
  if (options.clean_text) CleanText(text);
  if (options.handle_chinese_chars) HandleChineseChars(text);
  if (options.strip_accents) StripAccents(text);
  if (options.lowercase) Lowercase(text);
}

}  // namespace lmtrain::tokenizers_internal
