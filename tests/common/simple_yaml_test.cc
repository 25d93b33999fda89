// The job file's YAML trees: the tree built from yaml-cpp's parser events is YAML::Load's node
// graph, and ReadSimpleYamlDocument, where it takes a text, reads that same tree: on every
// example job file, the job_spec fuzz corpus, hand-picked shapes and 20,000 seeded random
// documents mixing the subset with what it leaves to yaml-cpp.
#include "common/internal/simple_yaml.h"

#include <gtest/gtest.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/common/simple_yaml_check.h"
#include "tests/test_paths.h"

namespace lmtrain::internal {
namespace {

using test_util::SimpleYamlMismatch;

// YAML::Load's graph in DumpYamlTree's format.
void DumpYamlCpp(const YAML::Node& node, int depth, std::string* out) {
  static constexpr const char* kKinds[] = {"null", "null", "scalar", "seq", "map"};
  const bool collection = node.IsSequence() || node.IsMap();
  absl::StrAppend(out, std::string(2 * depth, ' '), kKinds[static_cast<int>(node.Type())],
                  " tag=", node.Tag(), " line=", node.Mark().line >= 0 ? node.Mark().line + 1 : 0,
                  " col=", node.Mark().column,
                  collection && node.Style() == YAML::EmitterStyle::Flow ? " flow" : "");
  if (node.IsScalar()) absl::StrAppend(out, " text=[", node.Scalar(), "]");
  absl::StrAppend(out, "\n");
  if (depth >= 64) return;
  if (node.IsSequence()) {
    for (const YAML::Node& item : node) DumpYamlCpp(item, depth + 1, out);
  } else if (node.IsMap()) {
    for (const auto& entry : node) {
      DumpYamlCpp(entry.first, depth + 1, out);
      DumpYamlCpp(entry.second, depth + 1, out);
    }
  }
}

// The job file parser's reading before YamlTree, kept as the reference: YAML::Load's first
// document, and the first line of a second, non-empty one (0: none).
struct ReferenceDocument {
  YAML::Node root;
  int second_document_line = 0;
};

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

ReferenceDocument ReadReference(const std::string& text) {
  ReferenceDocument document;
  document.root = YAML::Load(text);  // The first document only.
  if (OnlyDocument(text, document.root)) return document;
  std::stringstream in(text);
  YAML::Parser parser(in);
  FirstNode first, second;
  if (parser.HandleNextDocument(first) && parser.HandleNextDocument(second)) {
    document.second_document_line = second.line();
  }
  return document;
}

// The event-built tree is the reference's YAML::Node graph, with the same second document;
// both throw on the same texts.
std::string TreeMismatch(const std::string& text) {
  std::string want;
  ReferenceDocument document;
  try {
    document = ReadReference(text);
  } catch (const YAML::Exception&) {
    YamlTree tree;
    EXPECT_THROW(ReadFirstYamlDocumentTree(text, &tree), YAML::Exception) << text;
    return "";
  }
  DumpYamlCpp(document.root, 0, &want);
  YamlTree tree;
  const FirstYamlTree read = ReadFirstYamlDocumentTree(text, &tree);
  const std::string got = DumpYamlTree(read.root);
  if (read.second_document_line != document.second_document_line) return "second document";
  return want == got ? "" : "YAML::Load:\n" + want + "event tree:\n" + got;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(SimpleYamlTest, ExampleJobFilesAndFuzzCorpusReadTheSameTree) {
  const std::filesystem::path root(LMTRAIN_SOURCE_DIR);
  int examples = 0, simple_examples = 0, corpus = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root / "examples")) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string text = ReadFile(entry.path());
    bool simple = false;
    EXPECT_EQ(SimpleYamlMismatch(text, &simple), "") << entry.path();
    EXPECT_EQ(TreeMismatch(text), "") << entry.path();
    ++examples;
    simple_examples += simple;
    if (!simple) ADD_FAILURE() << entry.path() << " is not read by the simple reader";
  }
  for (const auto& entry :
       std::filesystem::directory_iterator(root / "fuzz" / "corpus" / "job_spec")) {
    const std::string text = ReadFile(entry.path());
    EXPECT_EQ(SimpleYamlMismatch(text), "") << entry.path();
    EXPECT_EQ(TreeMismatch(text), "") << entry.path();
    ++corpus;
  }
  EXPECT_GE(examples, 6);
  EXPECT_EQ(simple_examples, examples) << "every example job file is in the simple subset";
  EXPECT_GE(corpus, 10);
}

TEST(SimpleYamlTest, HandPickedShapes) {
  const std::vector<std::string> texts = {
      "a: 1\n",
      "a: 1",
      "a:\n  b: c\n  d: [1, 2, {e: f}]\n",
      "a:\n- x\n- 'y'\nb: \"z w\"\n",
      "a:\n  - x # c\n  - [1,2]\n",
      "# c\n\na: -1.5e-05  # c\nb: ~\nc: null\nd: {}\ne: []\n",
      "a: {b: c, d: [e, f], g: {h: ~}}\n",
      "k: v\nk: w\n",
      "a b: c d\n",
      "a: b\n  c\n",
      "a:\n",
      "a: b: c\n",
      "a: 'it''s'\n",
      "a: \"x\\ty\"\n",
      "a: x#y\n",
      "a: [1, 2\n",
      "a: {b}\n",
      "a: [b, ]\n",
      "- a\n",
      " a: 1\n",
      "a: &x 1\nb: *x\n",
      "a: !!str 1\n",
      "a: |\n  text\n",
      "---\na: 1\n",
      "a: 1\n---\nb: 2\n",
      "a:\n    b: 1\n  c: 2\n",
      "a:\n  - 1\n  b: 2\n",
      "a: \t1\n",
      "a: caf\xc3\xa9\n",
      "? a\n: b\n",
      "a: -\n",
      "a: - b\n",
      "a: [-1, -x, .5, ./p, ~/q, +3]\n",
      "a :b\n",
      "a : b\n",
      "a:  \"\"\n",
      "'a': b\n",
      "a: [\"x\", 'y']\n",
      "a: {\"x\": y}\n",
      "a: [[1], [[2]]]\n",
  };
  int simple_count = 0;
  for (const std::string& text : texts) {
    bool simple = false;
    EXPECT_EQ(SimpleYamlMismatch(text, &simple), "") << text;
    EXPECT_EQ(TreeMismatch(text), "") << text;
    simple_count += simple;
  }
  EXPECT_GE(simple_count, 10);
}

// Line-by-line documents from pieces in and out of the simple subset.
class RandomDocument {
 public:
  explicit RandomDocument(uint32_t seed) : rng_(seed) {}

  std::string Text() {
    std::string out;
    if (Pick(20) == 0) out += Choose(kPrefixes);
    Map(0, 0, &out);
    if (Pick(20) == 0) out += Choose(kSuffixes);
    return out;
  }

 private:
  // clang-format off
  static inline const std::vector<std::string> kKeys = {
      "name", "task", "model", "a", "b_c", "x.y", "a b", "null", "~", "-k", "k:", "#k",
      "'q'",  "\"d\"", "k ",  "1",  "true", "[a]", "{a: b}", "? k", "&a k", "",  "k\t"};
  static inline const std::vector<std::string> kScalars = {
      "gpt2", "1", "-1", "0.001", "5e-05", "-1.5e+3", "true", "yes", "~", "null", "Null",
      "a b", "a  b", "a #b", "a#b", "-", "- x", ".5", "../data/t.txt", "x:y", "x: y", "+1",
      "/abs/p", "\"q\"", "'s'", "\"\"", "''", "'it''s'", "\"a\\\"b\"", "\"a # b\"", "'a: b'",
      "\"x\" y", "caf\xc3\xa9", "t\tb", "&a v", "*a", "!!str 5", "|", ">", "@x", "`x`", "%x",
      "a,b", "a]", "a}", "{}", "[]", "{a: 1}", "[1, 2]", "[1,2]", "{a: [b, {c: d}]}",
      "[a, ]", "{a}", "{a: }", "[a b, c]", "{a: 1, b: 2", "[\"x\", 'y']", "{a:1}", "[[], {}]",
      "~x", "x~", "a.b.c", "-.5", "--x", "{a: 1,\n   b: 2}", "[1,\n  2]", "{a: 1,\nb: 2}",
      "{\n    a: [x,\n      y]}", "[a\n  , b]", "{a: 1, # c\n   b: 2}", "[1,\n\n   2]",
      "{a:\n   1}", "[a,\n  b\n  ]"};
  static inline const std::vector<std::string> kWords = {
      "bert", "64", "2.0e-3", "true", "../d/t.txt", "'no'", "\"x y\"", "[a, b]", "{a: 1, b: c}",
      "{model_type: gpt2, n_layer: 1,\n     n_head: 2}"};
  static inline const std::vector<std::string> kComments = {"", "", "", " # c", "  # c: 'x'",
                                                            "#c", " #", "   "};
  static inline const std::vector<std::string> kPrefixes = {
      "---\n", "# head\n", "\n", "%YAML 1.2\n---\n", " \n"};
  static inline const std::vector<std::string> kSuffixes = {"...\n", "---\nb: 1\n", "\n\n",
                                                             "# tail", "x"};
  // clang-format on

  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  const std::string& Choose(const std::vector<std::string>& v) { return v[Pick(v.size())]; }
  std::string Indent(int indent) {
    const int jitter = Pick(25) == 0 ? Pick(3) - 1 : 0;
    return std::string(std::max(0, indent + jitter), ' ');
  }
  void Filler(std::string* out) {
    const int r = Pick(16);
    if (r == 0) *out += "\n";
    if (r == 1) *out += std::string(Pick(6), ' ') + "# comment: 'x' [y]\n";
  }

  void Map(int indent, int depth, std::string* out) {
    const int entries = 1 + Pick(4);
    for (int i = 0; i < entries; ++i) {
      Filler(out);
      *out += Indent(indent) + (Pick(8) == 0 ? Choose(kKeys) : "k" + std::to_string(Pick(5)));
      const int shape = depth >= 3 ? 0 : Pick(6);
      if (shape <= 2) {
        *out +=
            ": " + (Pick(2) == 0 ? Choose(kScalars) : Choose(kWords)) + Choose(kComments) + "\n";
        if (Pick(30) == 0) *out += Indent(indent + 2) + Choose(kScalars) + "\n";
      } else if (shape == 3) {
        *out += ":" + Choose(kComments) + "\n";
        Map(indent + 2 + Pick(2) * 2, depth + 1, out);
      } else if (shape == 4) {
        *out += ":\n";
        Seq(indent + (Pick(2) == 0 ? 0 : 2), depth + 1, out);
      } else {
        *out += ":" + std::string(Pick(2), ' ') + Choose(kComments) + "\n";
      }
    }
  }

  void Seq(int indent, int depth, std::string* out) {
    const int items = 1 + Pick(3);
    for (int i = 0; i < items; ++i) {
      Filler(out);
      *out += Indent(indent) + "-";
      const int shape = Pick(8);
      if (shape == 0) {
        *out += "\n";
      } else if (shape == 1 && depth < 3) {
        *out += " k: v\n";
      } else {
        *out += " " + (Pick(2) == 0 ? Choose(kScalars) : Choose(kWords)) + Choose(kComments) + "\n";
      }
    }
  }

  std::mt19937 rng_;
};

TEST(SimpleYamlTest, RandomDocumentsReadTheSameTree) {
  int simple_count = 0;
  for (uint32_t seed = 1; seed <= 20000; ++seed) {
    const std::string text = RandomDocument(seed).Text();
    bool simple = false;
    ASSERT_EQ(SimpleYamlMismatch(text, &simple), "") << "seed " << seed << ":\n" << text;
    if (seed % 10 == 0) ASSERT_EQ(TreeMismatch(text), "") << "seed " << seed << ":\n" << text;
    simple_count += simple;
  }
  std::cout << "simple reader took " << simple_count << " of 20000\n";
  // Both readers are exercised: a good share of the documents is in the subset, and the rest
  // go to yaml-cpp.
  EXPECT_GE(simple_count, 2000);
  EXPECT_LE(simple_count, 18000);
}

}  // namespace
}  // namespace lmtrain::internal
