#include "common/internal/simple_yaml.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lmtrain::internal {

namespace {

using Kind = YamlNode::Kind;

// One line that holds more than blanks or a comment.
struct Line {
  int number;  // 1-based
  int indent;
  std::string_view text;  // after the indentation
};

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '/' || c == '+' || c == '-' || c == '~';
}

bool IsNullWord(std::string_view s) {
  return s == "~" || s == "null" || s == "Null" || s == "NULL";
}

// Only printable ASCII and newlines, and no document markers.
bool PlainText(std::string_view text) {
  for (char c : text) {
    if (c != '\n' && (c < 0x20 || c > 0x7e)) return false;
  }
  return text.find("---") == std::string_view::npos && text.find("...") == std::string_view::npos;
}

// The lines with content: not blank, not a comment.
void SplitLines(std::string_view text, std::vector<Line>* lines) {
  int number = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    ++number;
    start = end + 1;
    size_t indent = line.find_first_not_of(' ');
    if (indent == std::string_view::npos || line[indent] == '#') continue;
    lines->push_back(Line{number, static_cast<int>(indent), line.substr(indent)});
  }
}

class Reader {
 public:
  Reader(const std::vector<Line>& lines, YamlTree* tree) : lines_(lines), tree_(tree) {}

  // The root mapping, or -1.
  int32_t Document() {
    if (lines_.empty() || lines_[0].indent != 0 || IsDash(lines_[0].text)) return -1;
    const int32_t root = BlockMap(0);
    return next_ == lines_.size() ? root : -1;
  }

 private:
  static bool IsDash(std::string_view s) { return s[0] == '-' && (s.size() == 1 || s[1] == ' '); }

  std::string_view text() const { return lines_[next_].text; }
  bool AtLineEnd() const { return pos_ == text().size(); }
  char At() const { return text()[pos_]; }
  int Column() const { return lines_[next_].indent + static_cast<int>(pos_); }
  int32_t Add(Kind kind, int column, const char* tag, std::string text, bool flow = false) {
    return tree_->Add(kind, lines_[next_].number, column, tag, std::move(text), flow);
  }
  void SkipSpaces() {
    while (!AtLineEnd() && At() == ' ') ++pos_;
  }
  // Nothing but a comment is left (the spaces before it are skipped already).
  bool AtEnd() const { return AtLineEnd() || (At() == '#' && pos_ > 0 && text()[pos_ - 1] == ' '); }

  // The lines at `indent` from next_ as one block mapping.
  int32_t BlockMap(int indent) {
    pos_ = 0;
    const int32_t map = Add(Kind::kMap, indent, "?", "");
    while (next_ < lines_.size() && lines_[next_].indent == indent) {
      if (IsDash(text())) return -1;
      pos_ = 0;
      const int32_t key = Plain(/*flow=*/false, /*key=*/true);
      if (key < 0 || AtLineEnd() || At() != ':') return -1;
      ++pos_;
      if (!AtLineEnd() && At() != ' ') return -1;
      SkipSpaces();
      int32_t value;
      if (AtEnd()) {
        ++next_;
        value = NestedBlock(indent);
      } else {
        value = Value(/*flow=*/false, indent);
        if (value < 0 || !AtEnd()) return -1;
        ++next_;
      }
      if (value < 0) return -1;
      tree_->Append(map, key);
      tree_->Append(map, value);
    }
    if (next_ < lines_.size() && lines_[next_].indent > indent) return -1;
    return map;
  }

  // The block value of a key at `indent` whose line ends after the ':'; -1 for an empty value.
  int32_t NestedBlock(int indent) {
    if (next_ == lines_.size()) return -1;
    const Line& line = lines_[next_];
    if (line.indent > indent) {
      return IsDash(line.text) ? BlockSeq(line.indent, false) : BlockMap(line.indent);
    }
    if (line.indent == indent && IsDash(line.text)) return BlockSeq(indent, true);
    return -1;
  }

  // The '-' lines at `indent` from next_ as one block sequence of values on their lines.
  int32_t BlockSeq(int indent, bool indentless) {
    pos_ = 0;
    const int32_t seq = Add(Kind::kSequence, indent, "?", "");
    while (next_ < lines_.size() && lines_[next_].indent == indent && IsDash(text())) {
      pos_ = 1;
      SkipSpaces();
      if (AtEnd()) return -1;
      const int32_t item = Value(/*flow=*/false, indent);
      if (item < 0 || !AtEnd()) return -1;
      tree_->Append(seq, item);
      ++next_;
    }
    if (next_ < lines_.size()) {
      const int next_indent = lines_[next_].indent;
      if (next_indent > indent || (next_indent == indent && !indentless)) return -1;
    }
    return seq;
  }

  // A scalar or flow collection at the cursor; the cursor moves past it and the spaces after
  // it. A flow collection may go on over lines indented deeper than `block_indent`.
  int32_t Value(bool flow, int block_indent) {
    const char c = At();
    int32_t node;
    if (c == '{' || c == '[') {
      node = Flow(c == '{', block_indent);
    } else if (c == '"' || c == '\'') {
      node = Quoted();
    } else {
      node = Plain(flow, /*key=*/false);
    }
    SkipSpaces();
    return node;
  }

  // At the end of a line inside a flow collection: on to the next line's first character.
  bool NextLineIfEnd(int block_indent) {
    if (!AtLineEnd()) return true;
    if (next_ + 1 == lines_.size() || lines_[next_ + 1].indent <= block_indent) return false;
    ++next_;
    pos_ = 0;
    return true;
  }

  int32_t Flow(bool map, int block_indent) {
    const char close = map ? '}' : ']';
    const int32_t node = Add(map ? Kind::kMap : Kind::kSequence, Column(), "?", "", true);
    ++pos_;
    SkipSpaces();
    if (!NextLineIfEnd(block_indent)) return -1;
    if (At() == close) {
      ++pos_;
      return node;
    }
    while (true) {
      if (map) {
        const int32_t key = Plain(/*flow=*/true, /*key=*/true);
        if (key < 0 || pos_ + 1 >= text().size() || At() != ':' || text()[pos_ + 1] != ' ') {
          return -1;
        }
        pos_ += 2;
        SkipSpaces();
        tree_->Append(node, key);
      }
      if (AtLineEnd()) return -1;
      const int32_t value = Value(/*flow=*/true, block_indent);
      if (value < 0 || AtLineEnd()) return -1;
      tree_->Append(node, value);
      if (At() == close) {
        ++pos_;
        return node;
      }
      if (At() != ',') return -1;
      ++pos_;
      SkipSpaces();
      if (!NextLineIfEnd(block_indent) || At() == close || At() == ',') return -1;
    }
  }

  // A one-line quoted scalar without escapes.
  int32_t Quoted() {
    const std::string_view s = text();
    const char quote = s[pos_];
    const size_t end = s.find(quote, pos_ + 1);
    if (end == std::string_view::npos) return -1;
    std::string_view inner = s.substr(pos_ + 1, end - pos_ - 1);
    if (quote == '"' && inner.find('\\') != std::string_view::npos) return -1;
    if (quote == '\'' && end + 1 < s.size() && s[end + 1] == '\'') return -1;
    const int32_t node = Add(Kind::kScalar, Column(), "!", std::string(inner));
    pos_ = end + 1;
    return node;
  }

  // A plain scalar of word characters and inner spaces; it ends before ':' for a key, before
  // ',' ']' '}' in a flow collection, before " #" or the end of the line otherwise.
  int32_t Plain(bool flow, bool key) {
    const std::string_view s = text();
    const size_t start = pos_;
    if (start >= s.size() || !IsWordChar(s[start])) return -1;
    if (s[start] == '-' && (start + 1 == s.size() || !IsWordChar(s[start + 1]))) return -1;
    size_t end = start;  // One past the last word character.
    size_t i = start;
    while (i < s.size() && (IsWordChar(s[i]) || s[i] == ' ')) {
      if (s[i] == ' ' && i + 1 < s.size() && s[i + 1] == '#') break;
      if (s[i] != ' ') end = i + 1;
      ++i;
    }
    if (i < s.size() && s[i] != ' ') {
      const char stop = s[i];
      const bool ok = key ? stop == ':' : (flow && (stop == ',' || stop == ']' || stop == '}'));
      if (!ok) return -1;
    }
    if (key && end != i) return -1;        // "key :" is left to yaml-cpp.
    if (flow && i == s.size()) return -1;  // A flow scalar that may go on at the next line.
    const std::string_view word = s.substr(start, end - start);
    const int column = Column();
    pos_ = key ? end : i;
    if (IsNullWord(word)) return Add(Kind::kNull, column, "", "");
    return Add(Kind::kScalar, column, "?", std::string(word));
  }

  const std::vector<Line>& lines_;
  YamlTree* tree_;
  size_t next_ = 0;  // The line under the cursor.
  size_t pos_ = 0;   // The cursor's offset in that line's text.
};

}  // namespace

bool ReadSimpleYamlDocument(std::string_view text, YamlTree* tree, YamlNode* root) {
  tree->Clear();
  if (!PlainText(text)) return false;
  std::vector<Line> lines;
  lines.reserve(64);
  SplitLines(text, &lines);
  Reader reader(lines, tree);
  const int32_t index = reader.Document();
  if (index < 0) return false;
  *root = tree->node(index);
  return true;
}

}  // namespace lmtrain::internal
