// Helpers shared by the chaos tests (chaos_test.cc, failover_chaos_test.cc): the uninterrupted
// reference run of a job file, file contents, and the seed of a kill schedule.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/time/clock.h"
#include "common/process_launcher.h"
#include "tests/integration/cluster.h"

namespace lmtrain::testing {

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The uninterrupted reference: lm-train alone on the same job file.
inline std::string ReferenceWeights(const std::filesystem::path& dir,
                                    const std::filesystem::path& job,
                                    const std::string& out = "reference") {
  PosixProcessLauncher launcher;
  auto child = launcher.Launch(
      {{BinDir() + "/lm-train", job.string(), "--output-dir", (dir / out).string()}});
  if (!child.ok()) return "";
  ReadAll((*child)->stdout_fd());
  const std::string err = ReadAll((*child)->stderr_fd());
  if ((*child)->Wait().exit_code != 0) {
    ADD_FAILURE() << "reference run failed: " << err;
    return "";
  }
  return ReadFile(dir / out / "model.safetensors");
}

// LMTRAIN_CHAOS_SEED, else the clock (the test prints it, to replay a failure).
inline uint64_t ChaosSeed() {
  const char* env = std::getenv("LMTRAIN_CHAOS_SEED");
  return env != nullptr ? std::stoull(env)
                        : static_cast<uint64_t>(absl::ToUnixMicros(absl::Now()));
}

}  // namespace lmtrain::testing
