// Helpers shared by the browser tests: finding chromium, running the project's Python with
// Playwright, and running a program to completion.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>

#include "absl/strings/str_split.h"
#include "tests/integration/cluster.h"

namespace lmtrain::testing {

// `name` on $PATH, or "".
inline std::string FindProgram(const std::string& name) {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path ? path : "", ':', absl::SkipEmpty())) {
    const std::filesystem::path p = std::filesystem::path(std::string(dir)) / name;
    if (access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

// Runs argv to completion; returns its exit code (-1 when it could not start or was killed)
// and fills stdout and stderr.
inline int RunProgram(const LaunchSpec& spec, std::string* out, std::string* err) {
  PosixProcessLauncher launcher;
  auto child = launcher.Launch(spec);
  if (!child.ok()) {
    *err = child.status().ToString();
    return -1;
  }
  std::thread drain([&] { *err = ReadAll((*child)->stderr_fd()); });
  *out = ReadAll((*child)->stdout_fd());
  drain.join();
  return (*child)->Wait().exit_code;
}

// Chromium's path ($CHROMIUM, else on $PATH), or "" when it is not installed (a reason to skip).
inline std::string ChromiumPath() {
  const char* chromium_env = std::getenv("CHROMIUM");
  return chromium_env ? chromium_env : FindProgram("chromium");
}

// Fails the test unless `python` (the project's .venv interpreter) imports playwright: without
// it this is a broken setup, not a reason to skip.
inline void ExpectPlaywright(const std::string& python) {
  ASSERT_EQ(access(python.c_str(), X_OK), 0)
      << python << " is missing: run scripts/setup.sh --tests (it creates .venv with playwright)";
  std::string version, err;
  LaunchSpec check;
  check.argv = {python, "-c",
                "import importlib.metadata, playwright.sync_api; "
                "print(importlib.metadata.version('playwright'))"};
  ASSERT_EQ(RunProgram(check, &version, &err), 0)
      << "playwright is not importable by " << python
      << ": run scripts/setup.sh --tests (it installs scripts/requirements-test.txt)\n"
      << err;
  std::cout << "playwright " << version;
}

}  // namespace lmtrain::testing
