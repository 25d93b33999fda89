// ReadSimpleYamlDocument: a reader for the job files people write, without yaml-cpp. It takes a
// small, plain subset of YAML and gives the tree yaml-cpp's parser gives for it
// (ReadFirstYamlDocumentTree, node for node: kinds, text, tags, lines and columns); for any
// other text it says so and the caller parses with yaml-cpp. The subset:
//   - one block mapping starting in column 0, nested block mappings and block sequences by
//     indentation (two or more spaces, or a sequence at its key's own indentation);
//   - values on the key's line: plain scalars on one line (letters, digits, space and
//     _ . / + - ~), quoted scalars on one line without escapes or inner quotes, and flow
//     mappings / sequences holding these (and each other), which may break to the next line
//     after '{', '[' or ',' (that line indented deeper than the key);
//   - blank lines, comment lines, and comments after a value ("  # ...").
// Anything else (tabs, CR, bytes above 0x7F, document markers '---' / '...', anchors, aliases,
// tags, block scalars, '?' keys, quoted keys, empty values, multi-line scalars, comments
// inside flow collections, ':' or '#' inside a scalar, ...) is left to yaml-cpp, including every
// syntax error, so messages stay yaml-cpp's.
// Thread-safe: no state.
#pragma once

#include <string_view>

#include "common/internal/yaml_tree.h"

namespace lmtrain::internal {

// Reads `text` into `tree` (cleared first) and sets `root` when `text` is in the subset above;
// false otherwise (`tree` then holds nothing of use).
bool ReadSimpleYamlDocument(std::string_view text, YamlTree* tree, YamlNode* root);

}  // namespace lmtrain::internal
