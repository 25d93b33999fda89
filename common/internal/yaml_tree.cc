#include "common/internal/yaml_tree.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <sstream>

#include "absl/strings/str_cat.h"

namespace lmtrain::internal {

namespace {

const std::string& EmptyString() {
  static const std::string* const kEmpty = new std::string();
  return *kEmpty;
}

// Builds a YamlTree from a parser's events the way yaml-cpp's NodeBuilder builds YAML::Nodes:
// a node's mark is its event's, a mapping takes keys and values alternately, and an alias is
// the node its anchor named (shared, not copied).
class TreeBuilder : public YAML::EventHandler {
 public:
  explicit TreeBuilder(YamlTree* tree) : tree_(tree) {}
  int32_t root() const { return root_; }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Finish(Push(YamlNode::Kind::kNull, mark, anchor, "", "", false));
  }
  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
    Finish(anchor >= 1 && anchor <= anchors_.size() ? anchors_[anchor - 1] : Push());
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    Finish(Push(YamlNode::Kind::kScalar, mark, anchor, tag, value, false));
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    open_.push_back(
        Push(YamlNode::Kind::kSequence, mark, anchor, tag, "", style == YAML::EmitterStyle::Flow));
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    open_.push_back(
        Push(YamlNode::Kind::kMap, mark, anchor, tag, "", style == YAML::EmitterStyle::Flow));
  }
  void OnMapEnd() override { Close(); }

 private:
  int32_t Push(YamlNode::Kind kind, const YAML::Mark& mark, YAML::anchor_t anchor,
               const std::string& tag, const std::string& text, bool flow) {
    const int line = mark.line >= 0 ? mark.line + 1 : 0;
    const int32_t index = tree_->Add(kind, line, mark.column, tag, text, flow);
    if (anchor != YAML::NullAnchor) {
      if (anchors_.size() < anchor) anchors_.resize(anchor, index);
      anchors_[anchor - 1] = index;
    }
    return index;
  }
  int32_t Push() { return tree_->Add(YamlNode::Kind::kNull, 0, -1, "", ""); }
  void Close() {
    const int32_t done = open_.back();
    open_.pop_back();
    Finish(done);
  }
  // `node` is complete: it becomes the root, or the next child of the open collection.
  void Finish(int32_t node) {
    if (open_.empty()) {
      root_ = node;
    } else {
      tree_->Append(open_.back(), node);
    }
  }

  YamlTree* tree_;
  std::vector<int32_t> open_;
  std::vector<int32_t> anchors_;
  int32_t root_ = -1;
};

// True when nothing can follow `root` in `text` but the end of the stream: a block mapping that
// starts in column 0 ends only at a document marker ('---' or '...') or at the end, and every
// other token in column 0 is either its next key or a syntax error the parser has thrown.
bool OnlyDocument(const std::string& text, const YamlNode& root) {
  if (!root.IsMap() || root.flow() || root.column() != 0) return false;
  return text.find("---") == std::string::npos && text.find("...") == std::string::npos;
}

void Dump(const YamlNode& node, int depth, int max_depth, std::string* out) {
  static constexpr const char* kKinds[] = {"null", "scalar", "seq", "map"};
  absl::StrAppend(out, std::string(2 * depth, ' '), kKinds[static_cast<int>(node.kind())],
                  " tag=", node.Tag(), " line=", node.line(), " col=", node.column(),
                  node.flow() ? " flow" : "");
  if (node.IsScalar()) absl::StrAppend(out, " text=[", node.Scalar(), "]");
  absl::StrAppend(out, "\n");
  if (depth >= max_depth) return;
  if (node.IsSequence() || node.IsMap()) {
    for (size_t i = 0; i < node.size(); ++i) {
      Dump(node.IsMap() ? (i % 2 == 0 ? node.key(i / 2) : node.value(i / 2)) : node.item(i),
           depth + 1, max_depth, out);
    }
  }
}

}  // namespace

YamlNode::Kind YamlNode::kind() const {
  return tree_ == nullptr ? Kind::kNull : tree_->nodes_[index_].kind;
}
const std::string& YamlNode::Scalar() const {
  return tree_ == nullptr ? EmptyString() : tree_->nodes_[index_].text;
}
const std::string& YamlNode::Tag() const {
  return tree_ == nullptr ? EmptyString() : tree_->nodes_[index_].tag;
}
int YamlNode::line() const { return tree_ == nullptr ? 0 : tree_->nodes_[index_].line; }
int YamlNode::column() const { return tree_ == nullptr ? -1 : tree_->nodes_[index_].column; }
bool YamlNode::flow() const { return tree_ != nullptr && tree_->nodes_[index_].flow; }
size_t YamlNode::size() const {
  return tree_ == nullptr ? 0 : tree_->nodes_[index_].children.size();
}
YamlNode YamlNode::item(size_t i) const {
  return YamlNode(tree_, tree_->nodes_[index_].children[i]);
}
YamlNode YamlNode::key(size_t i) const {
  return YamlNode(tree_, tree_->nodes_[index_].children[2 * i]);
}
YamlNode YamlNode::value(size_t i) const {
  return YamlNode(tree_, tree_->nodes_[index_].children[2 * i + 1]);
}

int32_t YamlTree::Add(YamlNode::Kind kind, int line, int column, std::string tag, std::string text,
                      bool flow) {
  nodes_.push_back(Data{kind, flow, line, column, std::move(tag), std::move(text), {}});
  return static_cast<int32_t>(nodes_.size() - 1);
}

FirstYamlTree ReadFirstYamlDocumentTree(const std::string& text, YamlTree* tree) {
  tree->Clear();
  FirstYamlTree document;
  std::stringstream in(text);
  YAML::Parser parser(in);
  TreeBuilder first(tree);
  if (!parser.HandleNextDocument(first) || first.root() < 0) return document;
  document.root = tree->node(first.root());
  if (OnlyDocument(text, document.root)) return document;
  YamlTree scratch;
  TreeBuilder second(&scratch);
  if (parser.HandleNextDocument(second) && second.root() >= 0) {
    const YamlNode root = scratch.node(second.root());
    if (!root.IsNull()) document.second_document_line = root.line();
  }
  return document;
}

std::string DumpYamlTree(const YamlNode& node, int max_depth) {
  std::string out;
  Dump(node, 0, max_depth, &out);
  return out;
}

}  // namespace lmtrain::internal
