// The answer comparison of the official SQuAD evaluation scripts (v1.1 and v2.0 share it):
// normalize_answer(s) = white_space_fix(remove_articles(remove_punc(lower(s)))), with Python 3
// str semantics over UTF-8:
//   lower            full Unicode lower-casing (ICU root locale, as str.lower());
//   remove_punc      drops the 32 ASCII characters of string.punctuation;
//   remove_articles  re.sub(r'\b(a|an|the)\b', ' ', s): each whole word "a", "an" or "the"
//                    becomes a space, a word being a run of Unicode letters, numbers and '_';
//   white_space_fix  ' '.join(s.split()), split on what str.isspace() calls white space.
// Unicode tables are ICU's, so letters new in a later Unicode than the one of the Python that
// ran a reference may differ. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lmtrain {

std::string NormalizeSquadAnswer(std::string_view text);

// NormalizeSquadAnswer(text).split(): the tokens that F1 counts.
std::vector<std::string> SquadAnswerTokens(std::string_view text);

}  // namespace lmtrain
