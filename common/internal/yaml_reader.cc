#include "common/internal/yaml_reader.h"

#include <yaml-cpp/exceptions.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/internal/simple_yaml.h"

namespace lmtrain::internal {
namespace {

// Optimal-string-alignment distance: Levenshtein plus adjacent transpositions. Keeps three
// rows of the table (a transposition looks two rows back), not all of them.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, row);
  }
  return previous[b.size()];
}

// Quoted scalars (tag "!") and explicit !!str are strings, never numbers or booleans.
bool IsQuoted(const YamlNode& node) {
  return node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str";
}

// A decimal float: [+-] digits [. digits] [e [+-] digits], at least one mantissa digit.
bool LooksLikeDecimal(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t digits = 0;
  while (i < s.size() && absl::ascii_isdigit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && absl::ascii_isdigit(s[i])) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (i == s.size() || !absl::ascii_isdigit(s[i])) return false;
    while (i < s.size() && absl::ascii_isdigit(s[i])) ++i;
  }
  return i == s.size();
}

}  // namespace

std::optional<double> ParseDecimal(std::string_view text) {
  double value = 0;
  if (!LooksLikeDecimal(text) ||
      !absl::SimpleAtod(absl::string_view(text.data(), text.size()), &value) ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

bool LooksLikeInt(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  return !s.empty() && std::all_of(s.begin(), s.end(), absl::ascii_isdigit);
}

std::string DescribeNode(const YamlNode& node) {
  switch (node.kind()) {
    case YamlNode::Kind::kMap:
      return "a mapping";
    case YamlNode::Kind::kSequence:
      return "a sequence";
    case YamlNode::Kind::kScalar:
      return "'" + node.Scalar() + "'";
    default:
      return "null";
  }
}

int NodeLine(const YamlNode& node) { return node.line(); }

std::string JoinPath(std::string_view parent, std::string_view key) {
  return parent.empty() ? std::string(key)
                        : absl::StrCat(std::string(parent), ".", std::string(key));
}

std::string ClosestMatch(std::string_view word, const std::vector<std::string_view>& candidates) {
  std::string lower = absl::AsciiStrToLower(std::string(word));
  std::string best;
  size_t best_distance = std::max<size_t>(1, word.size() / 3) + 1;
  for (std::string_view c : candidates) {
    // The lengths' difference is a lower bound of the distance: a long key costs no table.
    const size_t gap = lower.size() > c.size() ? lower.size() - c.size() : c.size() - lower.size();
    if (gap >= best_distance) continue;
    size_t d = EditDistance(lower, c);
    if (d < best_distance) best_distance = d, best = std::string(c);
  }
  return best;
}

std::string FormatDouble(double value) {
  if (!std::isfinite(value)) return value != value ? ".nan" : (value > 0 ? ".inf" : "-.inf");
  std::string text;
  for (int precision = 1; precision <= 17; ++precision) {
    text = absl::StrFormat("%.*g", precision, value);
    if (std::strtod(text.c_str(), nullptr) == value) break;
  }
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  return text;
}

std::optional<bool> ParseYamlBool(std::string_view text) {
  static const std::set<std::string, std::less<>> kTrue = {"true", "True", "TRUE", "yes", "Yes",
                                                           "YES",  "on",   "On",   "ON"};
  static const std::set<std::string, std::less<>> kFalse = {"false", "False", "FALSE", "no", "No",
                                                            "NO",    "off",   "Off",   "OFF"};
  if (kTrue.count(text)) return true;
  if (kFalse.count(text)) return false;
  return std::nullopt;
}

bool Range::Contains(double v) const {
  if (min && (min_exclusive ? v <= *min : v < *min)) return false;
  if (max && (max_exclusive ? v >= *max : v > *max)) return false;
  return true;
}

std::string Range::Describe() const {
  if (min && max) {
    return absl::StrCat("in ", min_exclusive ? "(" : "[", *min, ", ", *max,
                        max_exclusive ? ")" : "]");
  }
  if (min) return absl::StrCat(min_exclusive ? "> " : ">= ", *min);
  if (max) return absl::StrCat(max_exclusive ? "< " : "<= ", *max);
  return "any number";
}

YamlReader::YamlReader(std::string source_name) : source_name_(std::move(source_name)) {}

void YamlReader::Report(int line, std::string_view message) {
  problems_.emplace_back(std::max(line, 1), std::string(message));
}

void YamlReader::ReportAt(std::string_view path, std::string_view message) {
  bad_paths_.emplace(path);
  Report(LineOf(path), message);
}

void YamlReader::WarnAt(std::string_view path, std::string_view message) {
  warnings_.push_back(absl::StrCat(source_name_, ":", LineOf(path), ": ", std::string(message)));
}

void YamlReader::SetLine(const std::string& path, int line) { lines_[path] = line; }

int YamlReader::LineOf(std::string_view path) const {
  while (true) {
    auto it = lines_.find(path);
    if (it != lines_.end()) return it->second;
    size_t dot = path.rfind('.');
    if (dot == std::string_view::npos) break;
    path = path.substr(0, dot);
  }
  auto root = lines_.find(std::string_view());
  return root != lines_.end() ? root->second : 1;
}

bool YamlReader::Seen(std::string_view path) const { return lines_.count(path) > 0; }

bool YamlReader::VisitMapping(const YamlNode& node, const std::string& path,
                              const std::vector<std::string_view>& known, const Visitor& visit) {
  if (node.IsNull()) return true;
  if (!node.IsMap()) {
    std::string what = path.empty() ? "the top level" : path;
    ReportAt(path,
             absl::StrCat(what, " must be a mapping of key: value (got ", DescribeNode(node), ")"));
    return false;
  }
  std::set<std::string> seen;
  for (const auto& [key_node, value] : node.Entries()) {
    int line = NodeLine(key_node);
    if (!key_node.IsScalar()) {
      Report(line, absl::StrCat(path.empty() ? "top level" : path, ": keys must be plain names"));
      continue;
    }
    const std::string& key = key_node.Scalar();
    std::string child = JoinPath(path, key);
    if (!seen.insert(key).second) {
      Report(line,
             absl::StrCat("duplicate key '", child, "' (first set on line ", LineOf(child), ")"));
      continue;
    }
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string hint = ClosestMatch(key, known);
      std::string message = absl::StrCat("unknown key '", child, "'");
      if (!hint.empty()) {
        absl::StrAppend(&message, " (did you mean '", JoinPath(path, hint), "'?)");
      } else if (known.size() <= 12) {
        absl::StrAppend(&message, " (known: ", JoinNames(known), ")");
      }
      Report(line, message);
      continue;
    }
    SetLine(child, line);
    visit(key, value, child);
  }
  return true;
}

std::optional<std::string> YamlReader::PlainScalar(const YamlNode& node, const std::string& path,
                                                   std::string_view what) {
  if (node.IsScalar() && !IsQuoted(node)) return node.Scalar();
  std::string got = DescribeNode(node);
  if (node.IsScalar()) got = "the quoted string " + got;
  ReportAt(path, absl::StrCat(path, " must be ", std::string(what), " (got ", got, ")"));
  return std::nullopt;
}

bool YamlReader::CheckRange(double value, const std::string& text, const std::string& path,
                            const Range& range) {
  if (range.Contains(value)) return true;
  ReportAt(path, absl::StrCat(path, " must be ", range.Describe(), " (got ", text, ")"));
  return false;
}

std::optional<std::string> YamlReader::ReadString(const YamlNode& node, const std::string& path) {
  if (node.IsNull()) return std::string();
  if (node.IsScalar()) return node.Scalar();
  ReportAt(path, absl::StrCat(path, " must be a string (got ", DescribeNode(node), ")"));
  return std::nullopt;
}

std::optional<int64_t> YamlReader::ReadInt(const YamlNode& node, const std::string& path,
                                           const Range& range) {
  std::optional<std::string> text = PlainScalar(node, path, "an integer");
  if (!text) return std::nullopt;
  int64_t value = 0;
  if (!LooksLikeInt(*text) || !absl::SimpleAtoi(*text, &value)) {
    ReportAt(path, absl::StrCat(path, " must be an integer (got '", *text, "')"));
    return std::nullopt;
  }
  if (!CheckRange(static_cast<double>(value), *text, path, range)) return std::nullopt;
  return value;
}

std::optional<double> YamlReader::ReadDouble(const YamlNode& node, const std::string& path,
                                             const Range& range) {
  std::optional<std::string> text = PlainScalar(node, path, "a number");
  if (!text) return std::nullopt;
  const std::optional<double> value = ParseDecimal(*text);
  if (!value) {
    ReportAt(path, absl::StrCat(path, " must be a finite number (got '", *text, "')"));
    return std::nullopt;
  }
  if (!CheckRange(*value, *text, path, range)) return std::nullopt;
  return value;
}

std::optional<bool> YamlReader::ReadBool(const YamlNode& node, const std::string& path) {
  constexpr std::string_view kWhat = "true or false (also yes/no, on/off)";
  std::optional<std::string> text = PlainScalar(node, path, kWhat);
  if (!text) return std::nullopt;
  std::optional<bool> value = ParseYamlBool(*text);
  if (!value) {
    ReportAt(path, absl::StrCat(path, " must be ", std::string(kWhat), " (got '", *text, "')"));
  }
  return value;
}

absl::Status YamlReader::Finish() const {
  if (problems_.empty()) return absl::OkStatus();
  std::vector<std::pair<int, std::string>> sorted = problems_;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> lines;
  for (const auto& [line, message] : sorted) {
    lines.push_back(absl::StrCat(source_name_, ":", line, ": ", message));
  }
  return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
}

namespace {

// 1-based line of the first line that is not blank, a comment or a document marker; 0: none.
int FirstContentLine(std::string_view yaml) {
  int line = 1;
  const absl::string_view all(yaml.data(), yaml.size());
  for (absl::string_view text : absl::StrSplit(all, '\n')) {
    text = absl::StripAsciiWhitespace(text);
    if (!text.empty() && text[0] != '#' && text != "---" && text != "...") return line;
    ++line;
  }
  return 0;
}

}  // namespace

YamlNode ReadJobFileRoot(YamlReader& r, std::string_view yaml, YamlTree* tree) {
  FirstYamlTree document;
  if (!ReadSimpleYamlDocument(yaml, tree, &document.root)) {
    try {
      document = ReadFirstYamlDocumentTree(std::string(yaml), tree);
    } catch (const YAML::Exception& e) {
      r.Report(e.mark.line + 1, absl::StrCat("invalid YAML: ", e.msg));
      return YamlNode();
    }
  }
  if (document.root.IsNull()) {
    if (const int line = FirstContentLine(yaml); line > 0) {
      r.Report(line, "invalid YAML: no value could be read from the file from this line on");
    } else {
      r.Report(1,
               "the job file is empty (expected a mapping with name, task, model, tokenizer, "
               "data)");
    }
    return YamlNode();
  }
  if (document.second_document_line > 0) {
    r.Report(document.second_document_line,
             "expected one YAML document, found several (remove the second '---')");
  }
  r.SetLine("", NodeLine(document.root));
  return document.root;
}

}  // namespace lmtrain::internal
