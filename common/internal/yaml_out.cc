#include "common/internal/yaml_out.h"

#include <string_view>

namespace lmtrain::internal {
namespace {

// Strings YAML::Emitter writes plain in block and flow context alike (see the header).
bool SimpleWord(std::string_view s) {
  if (s.empty() || s.size() > 1024 || s.front() == '-' || s.front() == '.') return false;
  if (s == "null" || s == "Null" || s == "NULL") return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '/' || c == '+' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// Printable ASCII with nothing YAML::Emitter escapes inside double quotes.
bool QuotesVerbatim(std::string_view s) {
  for (char c : s) {
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
  }
  return true;
}

}  // namespace

// Walks the events as one node; every method returns false (leaving the output unusable) at
// the first thing the direct path does not write the way YAML::Emitter does.
class YamlOut::Renderer {
 public:
  explicit Renderer(const std::vector<Event>& events) : events_(events) {}

  std::optional<std::string> Document() {
    if (!Node(0, /*top=*/true, /*in_flow=*/false) || at_ != events_.size()) return std::nullopt;
    return std::move(out_);
  }

 private:
  bool IsManip(YAML::EMITTER_MANIP m) const {
    return at_ < events_.size() && events_[at_].kind == Kind::kManip && events_[at_].manip == m;
  }

  // A node whose key (if any) is written; `indent`: the column of its parent's keys.
  bool Node(size_t indent, bool top, bool in_flow) {
    if (at_ >= events_.size()) return false;
    if (IsManip(YAML::BeginMap)) return !in_flow && BlockMap(indent, top);
    if (IsManip(YAML::Flow)) {
      ++at_;
      if (!IsManip(YAML::BeginSeq)) return false;
      if (!top && !in_flow) out_ += ' ';
      return FlowSeq(in_flow);
    }
    if (!top && !in_flow) out_ += ' ';
    return Scalar(/*key=*/false);
  }

  bool Scalar(bool key) {
    bool quoted = false;
    if (IsManip(YAML::DoubleQuoted)) {
      if (key) return false;
      quoted = true;
      ++at_;
    }
    if (at_ >= events_.size()) return false;
    const Event& e = events_[at_++];
    switch (e.kind) {
      case Kind::kString:
        if (quoted) {
          if (!QuotesVerbatim(e.text)) return false;
          out_ += '"';
          out_ += e.text;
          out_ += '"';
        } else if (e.text.empty() && !key) {
          out_ += "\"\"";
        } else if (SimpleWord(e.text)) {
          out_ += e.text;
        } else {
          return false;
        }
        return true;
      case Kind::kSigned:
        out_ += std::to_string(e.signed_value);
        return !key;
      case Kind::kUnsigned:
        out_ += std::to_string(e.unsigned_value);
        return !key;
      case Kind::kNull:
        out_ += '~';
        return !key;
      case Kind::kManip:
        return false;
    }
    return false;
  }

  // "key: value" lines at column `column`; the first one after a newline unless `top`.
  bool BlockMap(size_t parent_indent, bool top) {
    ++at_;  // BeginMap
    const size_t column = top ? 0 : parent_indent + 2;
    bool first = true;
    while (!IsManip(YAML::EndMap)) {
      if (!IsManip(YAML::Key)) return false;
      ++at_;
      if (!first || !top) out_ += '\n';
      out_.append(column, ' ');
      if (!Scalar(/*key=*/true) || !IsManip(YAML::Value)) return false;
      ++at_;
      out_ += ':';
      if (!Node(column, /*top=*/false, /*in_flow=*/false)) return false;
      first = false;
    }
    ++at_;  // EndMap
    // Empty: "{}" where its keys would have gone.
    if (first) {
      if (!top) out_ += '\n';
      out_.append(column, ' ');
      out_ += "{}";
    }
    return true;
  }

  // "[a, b, [c, d]]". Left to YAML::Emitter: mappings inside, and a sequence inside a nested
  // one or an empty nested one (it indents those by the nesting depth).
  bool FlowSeq(bool nested) {
    ++at_;  // BeginSeq
    out_ += '[';
    bool first = true;
    while (!IsManip(YAML::EndSeq)) {
      if (at_ >= events_.size() || (nested && IsManip(YAML::Flow))) return false;
      if (!first) out_ += ", ";
      if (!Node(0, /*top=*/false, /*in_flow=*/true)) return false;
      first = false;
    }
    if (nested && first) return false;
    ++at_;  // EndSeq
    out_ += ']';
    return true;
  }

  const std::vector<Event>& events_;
  size_t at_ = 0;
  std::string out_;
};

YamlOut& YamlOut::operator<<(YAML::EMITTER_MANIP manip) {
  Event e{Kind::kManip};
  e.manip = manip;
  events_.push_back(std::move(e));
  return *this;
}

YamlOut& YamlOut::operator<<(const std::string& text) {
  Event e{Kind::kString};
  e.text = text;
  events_.push_back(std::move(e));
  return *this;
}

YamlOut& YamlOut::operator<<(YAML::_Null) {
  events_.push_back(Event{Kind::kNull});
  return *this;
}

std::string YamlOut::str() const {
  std::optional<std::string> direct = Renderer(events_).Document();
  return direct.has_value() ? *std::move(direct) : ViaYamlCpp();
}

std::string YamlOut::ViaYamlCpp() const {
  YAML::Emitter out;
  for (const Event& e : events_) {
    switch (e.kind) {
      case Kind::kManip:
        out << e.manip;
        break;
      case Kind::kString:
        out << e.text;
        break;
      case Kind::kSigned:
        out << e.signed_value;
        break;
      case Kind::kUnsigned:
        out << e.unsigned_value;
        break;
      case Kind::kNull:
        out << YAML::Null;
        break;
    }
  }
  return out.c_str();
}

}  // namespace lmtrain::internal
