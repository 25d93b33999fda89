// The generated completion scripts: bash's is run in a real bash (sourced, then _lmctl
// called the way bash's completion calls it); zsh is not installed here, so its script is
// checked for its parts.
#include "client/shell_completion.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace lmtrain {
namespace {

CompletionSpec Spec() {
  return {{{"submit", "submit a job file"},
           {"list", "jobs"},
           {"logs", "log lines"},
           {"completion", "print a script"}},
          {{"server", true}, {"output", true}, {"follow", false}}};
}

// Sources the bash script and completes `words` (the last one being completed).
std::string BashComplete(const std::string& words) {
  const std::string script = *CompletionScript("bash", Spec());
  const std::string file = absl::StrCat(std::filesystem::temp_directory_path().string(),
                                        "/lmctl-completion-", getpid(), ".bash");
  std::ofstream(file) << script;
  const std::string command = absl::StrCat(
      "bash --norc -c 'source ", file, " && COMP_WORDS=(", words,
      ") && COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) && _lmctl && echo \"${COMPREPLY[*]}\"'");
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buf[256];
  while (fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
  EXPECT_EQ(pclose(pipe), 0) << command;
  std::filesystem::remove(file);
  return out;
}

TEST(ShellCompletionTest, BashCompletesCommandsFlagsAndFormats) {
  EXPECT_EQ(BashComplete("lmctl l"), "list logs\n");
  EXPECT_EQ(BashComplete("lmctl \"\""), "submit list logs completion\n");
  EXPECT_EQ(BashComplete("lmctl --se"), "--server\n");
  EXPECT_EQ(BashComplete("lmctl list -o y"), "yaml\n");
  EXPECT_EQ(BashComplete("lmctl --server h:1 li"), "list\n");
  EXPECT_EQ(BashComplete("lmctl completion z"), "zsh\n");
  EXPECT_EQ(BashComplete("lmctl logs \"\""), "\n");  // Job ids are not guessed.
}

TEST(ShellCompletionTest, ZshScriptHasEveryCommandAndFlag) {
  const std::string script = *CompletionScript("zsh", Spec());
  EXPECT_EQ(script.rfind("#compdef lmctl\n", 0), 0u);
  for (const char* part : {"'submit:submit a job file'", "'logs:log lines'", "'--server[]:value:'",
                           "{-o,--output}'[output format]:format:(text json yaml)'",
                           "{-f,--follow}", "submit|validate) _files", "compdef _lmctl lmctl"}) {
    EXPECT_NE(script.find(part), std::string::npos) << part << "\n" << script;
  }
}

TEST(ShellCompletionTest, UnknownShell) {
  auto fish = CompletionScript("fish", Spec());
  ASSERT_FALSE(fish.ok());
  EXPECT_NE(fish.status().message().find("'fish'"), std::string_view::npos);
}

}  // namespace
}  // namespace lmtrain
