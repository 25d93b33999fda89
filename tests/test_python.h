// The project's Python environment (LMTRAIN_PYTHON: the .venv of scripts/setup.sh, with HF
// transformers, tokenizers and torch), for tests that make their reference data with Hugging
// Face's own code. Like tests/test_paths.h, the interpreter's path comes from the generated
// lmtrain_test_paths translation unit.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

// Absolute path of the interpreter (it may not exist in a checkout without a .venv).
const char* lmtrain_test_python();

namespace lmtrain::testing {

// Whether the interpreter exists and can import `module` (e.g. "transformers").
inline bool TestPythonHas(const std::string& module) {
  if (access(lmtrain_test_python(), X_OK) != 0) return false;
  const std::string command =
      std::string(lmtrain_test_python()) + " -c 'import " + module + "' >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Runs `command` through the shell and returns its exit code, or -1 when it could not run;
// stdout and stderr go to *output.
inline int RunShellCommand(const std::string& command, std::string* output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output->append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Runs `<python> <arguments>` (a shell word list), as RunShellCommand.
inline int RunTestPython(const std::string& arguments, std::string* output) {
  return RunShellCommand(std::string(lmtrain_test_python()) + " " + arguments, output);
}

}  // namespace lmtrain::testing
