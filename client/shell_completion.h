// `lmctl completion bash|zsh`: a completion script generated from lmctl's own command and
// flag tables, so it never goes stale. Load it with
//   bash: source <(lmctl completion bash)
//   zsh:  autoload -U compinit && compinit; source <(lmctl completion zsh)
// It completes command names, flags, -o's formats, files for submit/validate and the shells
// for completion. Pure functions.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace lmtrain {

struct CompletionSpec {
  std::vector<std::pair<std::string, std::string>> commands;  // name, one-line summary
  std::vector<std::pair<std::string, bool>> flags;            // name, takes a value
};

// InvalidArgument for a shell other than "bash" or "zsh".
absl::StatusOr<std::string> CompletionScript(const std::string& shell, const CompletionSpec& spec);

}  // namespace lmtrain
