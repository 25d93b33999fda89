#include "client/shell_completion.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace lmtrain {
namespace {

std::string Names(const std::vector<std::pair<std::string, std::string>>& commands) {
  std::vector<std::string> names;
  for (const auto& [name, summary] : commands) names.push_back(name);
  return absl::StrJoin(names, " ");
}

std::string FlagWords(const CompletionSpec& spec, bool with_value) {
  std::vector<std::string> words;
  for (const auto& [name, takes_value] : spec.flags) {
    if (takes_value == with_value) words.push_back("--" + name);
  }
  return absl::StrJoin(words, " ");
}

std::string Bash(const CompletionSpec& spec) {
  const std::string value_flags = FlagWords(spec, true);
  const std::string bool_flags = FlagWords(spec, false);
  std::string value_case = absl::StrReplaceAll(value_flags, {{" ", "|"}});
  return absl::StrCat(R"(# lmctl bash completion. Load with: source <(lmctl completion bash)
_lmctl() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
  local commands=")",
                      Names(spec.commands), R"("
  local flags=")",
                      value_flags, " ", bool_flags, R"( -o -f"
  case "$prev" in
    -o|--output) COMPREPLY=($(compgen -W "text json yaml" -- "$cur")); return 0;;
    )",
                      value_case, R"() COMPREPLY=(); return 0;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur")); return 0
  fi
  local cmd="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${COMP_WORDS[i]}" in
      -o|)",
                      value_case, R"() ((i++));;
      -*) ;;
      *) cmd="${COMP_WORDS[i]}"; break;;
    esac
  done
  case "$cmd" in
    "") COMPREPLY=($(compgen -W "$commands" -- "$cur"));;
    submit|validate) COMPREPLY=($(compgen -f -- "$cur"));;
    completion) COMPREPLY=($(compgen -W "bash zsh" -- "$cur"));;
    *) COMPREPLY=();;
  esac
  return 0
}
complete -o filenames -F _lmctl lmctl
)");
}

std::string ZshQuote(const std::string& s) {
  return absl::StrReplaceAll(s, {{"'", "'\\''"}, {":", "\\:"}, {"[", "\\["}, {"]", "\\]"}});
}

std::string Zsh(const CompletionSpec& spec) {
  std::string commands, flags;
  for (const auto& [name, summary] : spec.commands) {
    absl::StrAppend(&commands, "    '", name, ":", ZshQuote(summary), "'\n");
  }
  for (const auto& [name, takes_value] : spec.flags) {
    if (name == "output") {
      absl::StrAppend(
          &flags, "    '(-o --output)'{-o,--output}'[output format]:format:(text json yaml)' \\\n");
    } else if (name == "follow") {
      absl::StrAppend(&flags, "    '(-f --follow)'{-f,--follow}'[follow until the job ends]' \\\n");
    } else {
      absl::StrAppend(&flags, "    '--", name, takes_value ? "[]:value:' \\\n" : "[]' \\\n");
    }
  }
  return absl::StrCat(R"(#compdef lmctl
# lmctl zsh completion. Load with: autoload -U compinit && compinit; source <(lmctl completion zsh)
_lmctl() {
  local -a commands
  commands=(
)",
                      commands, R"(  )
  local state
  _arguments -C \
)",
                      flags, R"(    '1:command:->command' \
    '*::argument:->argument'
  case $state in
    command) _describe -t commands 'lmctl command' commands ;;
    argument)
      case $words[1] in
        submit|validate) _files ;;
        completion) _values 'shell' bash zsh ;;
      esac ;;
  esac
}
compdef _lmctl lmctl
)");
}

}  // namespace

absl::StatusOr<std::string> CompletionScript(const std::string& shell, const CompletionSpec& spec) {
  if (shell == "bash") return Bash(spec);
  if (shell == "zsh") return Zsh(spec);
  return absl::InvalidArgumentError(
      absl::StrCat("completion: shell must be bash or zsh (got '", shell, "')"));
}

}  // namespace lmtrain
