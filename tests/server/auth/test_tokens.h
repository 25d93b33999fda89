// Test tokens and temp folders for the security tests (no server needed).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/sha256.h"

namespace lmtrain::testing {

// The callers of the matrix. Tokens are fixed test values (>= 16 characters).
inline constexpr char kAliceToken[] = "alice-token-0123456789";      // user, owns the job
inline constexpr char kBobToken[] = "bob-token-0123456789abc";       // user, another user
inline constexpr char kWorkerToken[] = "worker-token-0123456789";    // worker
inline constexpr char kWorker2Token[] = "worker2-token-0123456789";  // another worker
inline constexpr char kAdminToken[] = "admin-token-0123456789";      // admin

// The five kinds of caller the authorization matrices try, relative to alice's job.
enum class Who { kAnonymous, kOtherUser, kOwner, kWorker, kAdmin };
struct CallerCase {
  Who who;
  const char* name;
  const char* token;  // "" for anonymous.
};
inline constexpr CallerCase kCallers[] = {{Who::kAnonymous, "anonymous", ""},
                                          {Who::kOtherUser, "other user", kBobToken},
                                          {Who::kOwner, "owner", kAliceToken},
                                          {Who::kWorker, "worker", kWorkerToken},
                                          {Who::kAdmin, "admin", kAdminToken}};

// A temp folder, removed on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    path_ = std::filesystem::temp_directory_path() /
            ("lmtrain-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(n_++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
    return (path_ / name).string();
  }

 private:
  static inline int n_ = 0;
  std::filesystem::path path_;
};

// The tokens file for the four callers: alice by hash, the others by plain token, so both
// forms are exercised.
inline std::string TokensYaml() {
  return "- user: alice\n  role: user\n  token_sha256: " +
         DigestHex(Sha256Of(kAliceToken).value()) +
         "\n- user: bob\n  role: user\n  token: " + kBobToken +
         "\n- user: worker-1\n  role: worker\n  token: " + kWorkerToken +
         "\n- user: root\n  role: admin\n  token: " + kAdminToken +
         "\n- user: worker-2\n  role: worker\n  token: " + kWorker2Token + "\n";
}

}  // namespace lmtrain::testing
