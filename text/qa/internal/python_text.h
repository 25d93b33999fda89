// The few Python str behaviours the SQuAD code relies on, over UTF-8: what str.isspace()
// calls white space, str.lstrip() and str.split() with no arguments. Pure functions;
// thread-safe. Ill-formed UTF-8 bytes are taken one at a time as U+FFFD (not white space).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace lmtrain::qa_internal {

// Decodes the code point at `*pos` of `utf8` and moves `*pos` past it.
// Precondition: *pos < utf8.size().
char32_t NextCodePoint(std::string_view utf8, size_t* pos);

// Python's str.isspace() for one code point (Unicode 15: categories Zs, Zl, Zp, and the
// bidirectional classes WS, B, S).
bool IsPythonWhitespace(char32_t c);

// s.lstrip(): `utf8` without its leading white space.
std::string_view LStripPython(std::string_view utf8);

// s.split(): the runs of non-white-space code points.
std::vector<std::string> SplitPython(std::string_view utf8);

}  // namespace lmtrain::qa_internal
