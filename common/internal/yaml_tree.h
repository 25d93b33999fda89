// YamlTree: one YAML document as a read-only graph of nodes, what the job file parser reads.
// It holds what yaml-cpp's YAML::Load would give for the same text (kinds, scalar text, tags,
// marks, the order of mapping entries, duplicate keys, aliases as shared nodes) without
// yaml-cpp's node memory (a reference-counted node set per document, several allocations per
// node), which cost lm-server about a tenth of a submit's CPU. Two builders fill it:
// ReadFirstYamlDocumentTree (yaml-cpp's parser, any YAML) and ReadSimpleYamlDocument
// (common/internal/simple_yaml.h, the common job files, without yaml-cpp).
//
// YamlNode is a small handle (tree pointer + index), valid while its tree lives; copying it is
// cheap. A default YamlNode is a null node without a line, as YAML::Node() is.
// Not thread-safe while being built; read-only afterwards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace lmtrain::internal {

class YamlTree;

class YamlNode {
 public:
  enum class Kind : uint8_t { kNull, kScalar, kSequence, kMap };

  YamlNode() = default;
  YamlNode(const YamlTree* tree, int32_t index) : tree_(tree), index_(index) {}

  Kind kind() const;
  bool IsNull() const { return kind() == Kind::kNull; }
  bool IsScalar() const { return kind() == Kind::kScalar; }
  bool IsSequence() const { return kind() == Kind::kSequence; }
  bool IsMap() const { return kind() == Kind::kMap; }
  // A scalar's text; "" for other kinds (as YAML::Node::Scalar()).
  const std::string& Scalar() const;
  // yaml-cpp's tag: "?" for plain scalars and collections, "!" for quoted scalars, the written
  // tag for explicitly tagged nodes, "" for nulls.
  const std::string& Tag() const;
  int line() const;    // 1-based; 0 where none is known.
  int column() const;  // 0-based, of the node's first character; -1 where none is known.
  bool flow() const;   // A collection written in flow style ({...} or [...]).

  // Sequence items, or mapping entries (pairs of key and value), in document order.
  size_t size() const;
  YamlNode item(size_t i) const;
  YamlNode key(size_t i) const;
  YamlNode value(size_t i) const;

  // For range-for: `for (YamlNode item : node.Items())`, `for (auto [k, v] : node.Entries())`;
  // empty for nodes of other kinds.
  class ItemRange;
  class EntryRange;
  ItemRange Items() const;
  EntryRange Entries() const;

 private:
  const YamlTree* tree_ = nullptr;
  int32_t index_ = -1;
};

// An index range over a node's children, read through `Get`.
template <typename T, T (*Get)(const YamlNode&, size_t)>
class YamlChildRange {
 public:
  class Iterator {
   public:
    Iterator(const YamlNode* node, size_t i) : node_(node), i_(i) {}
    T operator*() const { return Get(*node_, i_); }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const Iterator& other) const { return i_ != other.i_; }

   private:
    const YamlNode* node_;
    size_t i_;
  };
  YamlChildRange(YamlNode node, size_t n) : node_(node), n_(n) {}
  Iterator begin() const { return Iterator(&node_, 0); }
  Iterator end() const { return Iterator(&node_, n_); }

 private:
  YamlNode node_;
  size_t n_;
};

inline YamlNode YamlItemAt(const YamlNode& n, size_t i) { return n.item(i); }
inline std::pair<YamlNode, YamlNode> YamlEntryAt(const YamlNode& n, size_t i) {
  return {n.key(i), n.value(i)};
}
class YamlNode::ItemRange : public YamlChildRange<YamlNode, &YamlItemAt> {
  using YamlChildRange::YamlChildRange;
};
class YamlNode::EntryRange : public YamlChildRange<std::pair<YamlNode, YamlNode>, &YamlEntryAt> {
  using YamlChildRange::YamlChildRange;
};
inline YamlNode::ItemRange YamlNode::Items() const {
  return ItemRange(*this, IsSequence() ? size() : 0);
}
inline YamlNode::EntryRange YamlNode::Entries() const {
  return EntryRange(*this, IsMap() ? size() / 2 : 0);
}

class YamlTree {
 public:
  YamlTree() { nodes_.reserve(64); }
  YamlTree(const YamlTree&) = delete;
  YamlTree& operator=(const YamlTree&) = delete;

  // Adds a node and returns its index; `line` 1-based (0: none), `column` 0-based.
  int32_t Add(YamlNode::Kind kind, int line, int column, std::string tag, std::string text,
              bool flow = false);
  // Appends `child` to the collection `parent`: an item of a sequence; for a mapping, keys and
  // values alternately.
  void Append(int32_t parent, int32_t child) { nodes_[parent].children.push_back(child); }
  YamlNode node(int32_t index) const { return YamlNode(this, index); }
  void Clear() { nodes_.clear(); }
  size_t node_count() const { return nodes_.size(); }

 private:
  friend class YamlNode;
  struct Data {
    YamlNode::Kind kind;
    bool flow;
    int line;
    int column;
    std::string tag;
    std::string text;
    std::vector<int32_t> children;
  };
  std::vector<Data> nodes_;
};

// The first document of `text` read by yaml-cpp's parser into `tree` (cleared first): what
// YAML::Load reads; and where a second, non-empty document starts (0: none), found without
// yaml-cpp's LoadAll: Debian's yaml-cpp 0.7 parser hands out empty documents forever on some
// malformed inputs and LoadAll keeps them all until memory runs out (a 607-byte job file took
// more than 2 GB), so this looks at most one document past the first and its cost is bounded
// by the input's length. Throws YAML::Exception on a syntax error, as YAML::Load does; `root`
// is a null node when there is no document.
struct FirstYamlTree {
  YamlNode root;
  int second_document_line = 0;
};
FirstYamlTree ReadFirstYamlDocumentTree(const std::string& text, YamlTree* tree);

// Every node reachable from `node` as indented text (kind, tag, line, column, style, scalar
// text), at most `max_depth` levels deep (aliases can make cycles): two trees read the same
// when their dumps are equal.
std::string DumpYamlTree(const YamlNode& node, int max_depth = 64);

}  // namespace lmtrain::internal
