// The check behind every proof that ReadSimpleYamlDocument reads what yaml-cpp reads: the job
// file tests run it on each job file they parse, simple_yaml_test on the examples, the fuzz
// corpus and seeded random documents.
#pragma once

#include <string>

#include "common/internal/simple_yaml.h"
#include "common/internal/yaml_tree.h"

namespace lmtrain::test_util {

// "" when ReadSimpleYamlDocument declines `text`, or reads the same tree (node for node) as
// yaml-cpp's parser, which must then find no syntax error and no second document; else what
// differs. *simple (when given) says whether the simple reader took the text.
inline std::string SimpleYamlMismatch(const std::string& text, bool* simple = nullptr) {
  internal::YamlTree fast_tree;
  internal::YamlNode fast_root;
  const bool took = internal::ReadSimpleYamlDocument(text, &fast_tree, &fast_root);
  if (simple != nullptr) *simple = took;
  if (!took) return "";
  internal::YamlTree tree;
  internal::FirstYamlTree reference;
  try {
    reference = internal::ReadFirstYamlDocumentTree(text, &tree);
  } catch (const std::exception& e) {
    return std::string("the simple reader took text yaml-cpp rejects: ") + e.what();
  }
  if (reference.second_document_line != 0) return "yaml-cpp found a second document";
  const std::string want = internal::DumpYamlTree(reference.root);
  const std::string got = internal::DumpYamlTree(fast_root);
  if (want == got) return "";
  return "yaml-cpp:\n" + want + "simple reader:\n" + got;
}

}  // namespace lmtrain::test_util
