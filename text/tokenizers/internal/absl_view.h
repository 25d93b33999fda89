// Debian's abseil ships its own absl::string_view rather than an alias of
// std::string_view, so absl::StrCat, absl::StrSplit and heterogeneous lookup in
// absl::flat_hash_map<std::string, ...> need an explicit conversion from
// std::string_view.
#pragma once

#include <string_view>

#include "absl/strings/string_view.h"

namespace lmtrain::tokenizers_internal {

inline absl::string_view AbslView(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

}  // namespace lmtrain::tokenizers_internal
