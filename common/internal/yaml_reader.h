// Typed, table-driven reading of YAML mappings that collects every problem instead of stopping
// at the first one. Private to common/ (the job file parser).
//
// Problems read "source:line: message" with 1-based lines. The reader remembers the line of
// every key it has visited under its dotted path ("training.learning_rate"), so checks made after
// reading (cross-field rules, file existence) can still point at the right line.
//
// Not thread-safe: one YamlReader per parse.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/internal/yaml_out.h"
#include "common/internal/yaml_tree.h"

namespace lmtrain::internal {

// 1-based line of `node`, or 0 where yaml-cpp knows none (e.g. an empty document).
int NodeLine(const YamlNode& node);

// What a value is, for "(got ...)" in messages: "a mapping", "a sequence", "null" or "'text'".
std::string DescribeNode(const YamlNode& node);

// "a, b, c" from any range of names convertible to std::string_view. (Debian's abseil has its
// own absl::string_view, so absl::StrJoin does not take std::string_view.)
template <typename Names>
std::string JoinNames(const Names& names) {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

// "a.b" from ("a", "b"); just "b" when `parent` is empty.
std::string JoinPath(std::string_view parent, std::string_view key);

// The closest of `candidates` to `word` by edit distance (transpositions count 1), or "" when
// none is close enough to be a likely typo.
std::string ClosestMatch(std::string_view word, const std::vector<std::string_view>& candidates);

// Shortest decimal text that parses back to exactly `value`; always has a '.' or an exponent
// ("3.0", "5e-05") so YAML readers see a float, not an integer.
std::string FormatDouble(double value);

// Bounds of a numeric field. Describe() gives the text after "must be": "> 0", "in [0, 1)".
struct Range {
  std::optional<double> min;
  bool min_exclusive = false;
  std::optional<double> max;
  bool max_exclusive = false;

  static Range Any() { return {}; }
  static Range Above(double v) { return {v, true, std::nullopt, false}; }
  static Range AtLeast(double v) { return {v, false, std::nullopt, false}; }
  static Range HalfOpen(double lo, double hi) { return {lo, false, hi, true}; }
  static Range Open(double lo, double hi) { return {lo, true, hi, true}; }
  static Range Closed(double lo, double hi) { return {lo, false, hi, false}; }
  static Range OpenClosed(double lo, double hi) { return {lo, true, hi, false}; }

  bool Contains(double v) const;
  std::string Describe() const;
};

// Reads one YAML document's values into typed fields and collects every problem found.
class YamlReader {
 public:
  explicit YamlReader(std::string source_name);

  YamlReader(const YamlReader&) = delete;
  YamlReader& operator=(const YamlReader&) = delete;

  // Records "source:line: message". Lines < 1 are reported as line 1.
  void Report(int line, std::string_view message);
  // Reports at LineOf(path) and marks `path` as having a problem.
  void ReportAt(std::string_view path, std::string_view message);
  // True when something was reported at exactly `path`, so later checks of the same key can
  // stay quiet instead of piling a second message on the first.
  bool HasProblem(std::string_view path) const { return bad_paths_.count(path) > 0; }

  // Records the warning "source:line: message" at LineOf(path): not a problem, parsing goes on.
  void WarnAt(std::string_view path, std::string_view message);
  // Every warning, in the order recorded.
  const std::vector<std::string>& warnings() const { return warnings_; }

  // Remembers that the key `path` sits on `line`.
  void SetLine(const std::string& path, int line);
  // The line of `path`, else of its nearest remembered ancestor, else 1.
  int LineOf(std::string_view path) const;
  // True when a key with this exact path was visited.
  bool Seen(std::string_view path) const;

  using Visitor =
      std::function<void(const std::string& key, const YamlNode& value, const std::string& path)>;
  // Visits each entry of the mapping `node` found at `path` ("" for the document root) in
  // document order, remembering each key's line. A null node is an empty mapping. Reports a node
  // that is not a mapping (and returns false), keys that are not scalars, duplicate keys and keys
  // not in `known` (with a did-you-mean); `visit` sees only the known, first-seen keys.
  bool VisitMapping(const YamlNode& node, const std::string& path,
                    const std::vector<std::string_view>& known, const Visitor& visit);

  // Typed scalar readers for the value of key `path`. Each reports a problem and returns nullopt
  // for a value of the wrong type or outside `range`. Numbers and booleans must be plain
  // (unquoted) scalars; booleans are true/false, yes/no or on/off in any common case. A null
  // value reads as the empty string; it is an error for the other types.
  std::optional<std::string> ReadString(const YamlNode& node, const std::string& path);
  std::optional<int64_t> ReadInt(const YamlNode& node, const std::string& path,
                                 const Range& range = Range::Any());
  std::optional<double> ReadDouble(const YamlNode& node, const std::string& path,
                                   const Range& range = Range::Any());
  std::optional<bool> ReadBool(const YamlNode& node, const std::string& path);

  // Reports "path must be <= max" (or ">= min") when `value` does not fit in an N.
  template <typename N>
  bool FitsIn(int64_t value, const std::string& path) {
    if (value > std::numeric_limits<N>::max()) {
      ReportAt(path, path + " must be <= " + std::to_string(std::numeric_limits<N>::max()) +
                         " (got " + std::to_string(value) + ")");
      return false;
    }
    if (value < std::numeric_limits<N>::min()) {
      ReportAt(path, path + " must be >= " + std::to_string(std::numeric_limits<N>::min()) +
                         " (got " + std::to_string(value) + ")");
      return false;
    }
    return true;
  }

  bool ok() const { return problems_.empty(); }
  // OK when nothing was reported; else InvalidArgument listing every problem, one per line,
  // ordered by line (problems on the same line keep the order they were found in).
  absl::Status Finish() const;

 private:
  // Reports "path must be <what> (got ...)" and returns nullopt when `node` is not a plain
  // scalar; else returns its text.
  std::optional<std::string> PlainScalar(const YamlNode& node, const std::string& path,
                                         std::string_view what);
  bool CheckRange(double value, const std::string& text, const std::string& path,
                  const Range& range);

  std::string source_name_;
  std::vector<std::pair<int, std::string>> problems_;
  std::map<std::string, int, std::less<>> lines_;
  std::set<std::string, std::less<>> bad_paths_;
  std::vector<std::string> warnings_;
};

// The job file's one document, read into `tree` (ReadSimpleYamlDocument where the text is in
// its subset, else yaml-cpp's parser: the same tree either way), or a null node after reporting
// why there is none to `r`: a YAML syntax error at its line, an empty file, a file from which no
// value could be read, or a second document.
YamlNode ReadJobFileRoot(YamlReader& r, std::string_view yaml, YamlTree* tree);

// Whether a scalar's text is [+-]digits and nothing else (no hex, no spaces, no underscores):
// what the job file reads as an integer.
bool LooksLikeInt(std::string_view s);

// The finite number a scalar's text spells as a decimal ([+-] digits [. digits] [e [+-] digits];
// no hex, inf or nan), or nullopt: what ReadDouble accepts, without reporting.
std::optional<double> ParseDecimal(std::string_view text);

// The boolean a plain scalar spells (true/false, yes/no, on/off; lower, Capitalised or UPPER
// case), or nullopt.
std::optional<bool> ParseYamlBool(std::string_view text);

// One row of a mapping's table: the key, how to read its value into an S, and how to write it.
template <typename S>
struct Field {
  std::string_view key;
  std::function<void(YamlReader&, const YamlNode& value, const std::string& path, S&)> read;
  std::function<void(YamlOut&, const S&)> write;
};

template <typename S>
using FieldTable = std::vector<Field<S>>;

// Reads the mapping `node` at `path` into `out` through `table`; unknown keys are reported.
// Returns false when `node` is not a mapping.
template <typename S>
bool ReadTable(YamlReader& reader, const YamlNode& node, const std::string& path,
               const FieldTable<S>& table, S& out) {
  std::vector<std::string_view> known;
  for (const Field<S>& f : table) known.push_back(f.key);
  return reader.VisitMapping(
      node, path, known,
      [&](const std::string& key, const YamlNode& value, const std::string& child) {
        for (const Field<S>& f : table) {
          if (f.key == key) f.read(reader, value, child, out);
        }
      });
}

// Writes every row of `table` as "key: value" entries of the current mapping (rows without a
// writer, such as RemovedField, are skipped).
template <typename S>
void WriteTable(YamlOut& out, const FieldTable<S>& table, const S& value) {
  for (const Field<S>& f : table) {
    if (!f.write) continue;
    out << YAML::Key << std::string(f.key) << YAML::Value;
    f.write(out, value);
  }
}

// An integer (int, int64_t) or floating-point member, checked against `range` and, for
// integers, against the member type's limits.
template <typename S, typename N>
Field<S> NumberField(std::string_view key, N S::*member, Range range = Range::Any()) {
  static_assert(std::is_arithmetic_v<N> && !std::is_same_v<N, bool>);
  auto read = [member, range](YamlReader& r, const YamlNode& v, const std::string& path, S& out) {
    if constexpr (std::is_integral_v<N>) {
      std::optional<int64_t> x = r.ReadInt(v, path, range);
      if (x && r.FitsIn<N>(*x, path)) out.*member = static_cast<N>(*x);
    } else {
      if (auto x = r.ReadDouble(v, path, range)) out.*member = *x;
    }
  };
  auto write = [member](YamlOut& e, const S& s) {
    if constexpr (std::is_integral_v<N>) {
      e << static_cast<long long>(s.*member);
    } else {
      e << FormatDouble(s.*member);
    }
  };
  return {key, read, write};
}

// A key that is no longer read: any value is reported with `message` (which should name the
// key that replaces it). Never written back.
template <typename S>
Field<S> RemovedField(std::string_view key, std::string message) {
  return {key,
          [message](YamlReader& r, const YamlNode&, const std::string& path, S&) {
            r.ReportAt(path, message);
          },
          nullptr};
}

// An old name of a key, still read (by `read`, into the new key's member) with the warning
// `message` (which should name the key to use instead). Never written back.
template <typename S>
Field<S> DeprecatedField(
    std::string_view key, std::string message,
    std::function<void(YamlReader&, const YamlNode& value, const std::string& path, S&)> read) {
  return {key,
          [message, read](YamlReader& r, const YamlNode& v, const std::string& path, S& out) {
            r.WarnAt(path, message);
            read(r, v, path, out);
          },
          nullptr};
}

// `field`, where a null value (HF's None: "not set") leaves the member at its default; any other
// value is read as `field` reads it.
template <typename S>
Field<S> NullAsDefault(Field<S> field) {
  field.read = [read = std::move(field.read)](YamlReader& r, const YamlNode& v,
                                              const std::string& path, S& out) {
    if (!v.IsNull()) read(r, v, path, out);
  };
  return field;
}

template <typename S>
Field<S> BoolField(std::string_view key, bool S::*member) {
  return {key,
          [member](YamlReader& r, const YamlNode& v, const std::string& path, S& out) {
            if (auto x = r.ReadBool(v, path)) out.*member = *x;
          },
          [member](YamlOut& e, const S& s) { e << (s.*member ? "true" : "false"); }};
}

template <typename S>
Field<S> StringField(std::string_view key, std::string S::*member) {
  return {key,
          [member](YamlReader& r, const YamlNode& v, const std::string& path, S& out) {
            if (auto x = r.ReadString(v, path)) out.*member = *x;
          },
          [member](YamlOut& e, const S& s) { e << s.*member; }};
}

// An optional boolean: a null value (or `~`) leaves it unset; written back as null when unset.
template <typename S>
Field<S> OptionalBoolField(std::string_view key, std::optional<bool> S::*member) {
  return {key,
          [member](YamlReader& r, const YamlNode& v, const std::string& path, S& out) {
            if (v.IsNull()) {
              out.*member = std::nullopt;
            } else if (auto x = r.ReadBool(v, path)) {
              out.*member = *x;
            }
          },
          [member](YamlOut& e, const S& s) {
            if ((s.*member).has_value()) {
              e << (*(s.*member) ? "true" : "false");
            } else {
              e << YAML::Null;
            }
          }};
}

// An optional integer (int64_t) or floating-point member checked against `range`: a null value
// (or `~`) leaves it unset; written back as null when unset.
template <typename S, typename N>
Field<S> OptionalNumberField(std::string_view key, std::optional<N> S::*member,
                             Range range = Range::Any()) {
  static_assert(std::is_same_v<N, int64_t> || std::is_same_v<N, double>);
  return {key,
          [member, range](YamlReader& r, const YamlNode& v, const std::string& path, S& out) {
            if (v.IsNull()) {
              out.*member = std::nullopt;
            } else if constexpr (std::is_integral_v<N>) {
              if (auto x = r.ReadInt(v, path, range)) out.*member = *x;
            } else if (auto x = r.ReadDouble(v, path, range)) {
              out.*member = *x;
            }
          },
          [member](YamlOut& e, const S& s) {
            if (!(s.*member).has_value()) {
              e << YAML::Null;
            } else if constexpr (std::is_integral_v<N>) {
              e << static_cast<long long>(*(s.*member));
            } else {
              e << FormatDouble(*(s.*member));
            }
          }};
}

// A string member restricted to `choices`.
template <typename S>
Field<S> ChoiceField(std::string_view key, std::string S::*member,
                     std::vector<std::string_view> choices) {
  auto read = [member, choices](YamlReader& r, const YamlNode& v, const std::string& path,
                                S& out) {
    std::optional<std::string> x = r.ReadString(v, path);
    if (!x) return;
    for (std::string_view c : choices) {
      if (c == *x) {
        out.*member = *x;
        return;
      }
    }
    r.ReportAt(path, path + " must be one of " + JoinNames(choices) + " (got '" + *x + "')");
  };
  return {key, read, [member](YamlOut& e, const S& s) { e << s.*member; }};
}

// A mapping of string keys to string values (e.g. a label selector). Scalar values of any
// type are taken as text; a nested mapping or sequence is a problem. Written in key order.
template <typename S>
Field<S> StringMapField(std::string_view key, std::map<std::string, std::string> S::*member) {
  auto read = [member](YamlReader& r, const YamlNode& v, const std::string& path, S& out) {
    if (v.IsNull()) return;
    if (!v.IsMap()) {
      r.ReportAt(path,
                 path + " must be a mapping of names to values (got " + DescribeNode(v) + ")");
      return;
    }
    for (const auto& kv : v.Entries()) {
      const std::string child = JoinPath(path, kv.first.Scalar());
      r.SetLine(child, NodeLine(kv.first));
      if (!kv.second.IsScalar()) {
        r.ReportAt(child, child + " must be a plain value (got " + DescribeNode(kv.second) + ")");
        continue;
      }
      (out.*member)[kv.first.Scalar()] = kv.second.Scalar();
    }
  };
  auto write = [member](YamlOut& e, const S& s) {
    e << YAML::BeginMap;
    for (const auto& [k, v] : s.*member) e << YAML::Key << k << YAML::Value << v;
    e << YAML::EndMap;
  };
  return {key, read, write};
}

}  // namespace lmtrain::internal
