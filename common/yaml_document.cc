#include "common/yaml_document.h"

#include <yaml-cpp/eventhandler.h>

#include <sstream>

#include "absl/strings/str_cat.h"

namespace lmtrain {

namespace {

// Records where a document's first node starts, and ignores everything else.
class FirstNode : public YAML::EventHandler {
 public:
  int line() const { return line_; }  // 1-based; 0: the document had no node.

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Seen(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Seen(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Seen(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Seen(mark);
  }
  void OnMapEnd() override {}

 private:
  void Seen(const YAML::Mark& mark) {
    if (line_ == 0) line_ = mark.line + 1;
  }
  int line_ = 0;
};

// True when nothing can follow `root` in `text` but the end of the stream: a block mapping that
// starts in column 0 ends only at a document marker ('---' or '...') or at the end, and every
// other token in column 0 is either its next key or a syntax error YAML::Load has thrown.
bool OnlyDocument(const std::string& text, const YAML::Node& root) {
  if (!root.IsMap() || root.Style() != YAML::EmitterStyle::Block || root.Mark().column != 0) {
    return false;
  }
  return text.find("---") == std::string::npos && text.find("...") == std::string::npos;
}

}  // namespace

FirstYamlDocument ReadFirstYamlDocument(const std::string& text) {
  FirstYamlDocument document;
  document.root = YAML::Load(text);  // The first document only.
  // Job files take this path: it spares a second parse of the whole first document.
  if (OnlyDocument(text, document.root)) return document;
  std::stringstream in(text);
  YAML::Parser parser(in);
  FirstNode first, second;
  if (parser.HandleNextDocument(first) && parser.HandleNextDocument(second)) {
    document.second_document_line = second.line();
  }
  return document;
}

absl::StatusOr<YAML::Node> ParseYamlDocument(const std::string& text, const std::string& source) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ":", e.mark.line + 1, ": not valid YAML: ", e.msg));
  }
}

int YamlLine(const YAML::Node& node) { return node.Mark().line >= 0 ? node.Mark().line + 1 : 0; }

absl::StatusOr<std::string> YamlKey(const std::string& source, const YAML::Node& key) {
  if (!key.IsScalar()) {
    return YamlError(source, key, "a mapping key must be a plain name, not a list, mapping or null");
  }
  return key.Scalar();
}

absl::Status YamlError(const std::string& source, const YAML::Node& node, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(source, ":", YamlLine(node), ": ", what));
}

}  // namespace lmtrain
