#include "text/tokenizers/internal/spm_library.h"

#include <cstdlib>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lmtrain::tokenizers_internal {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;

// Sets an environment variable for one scope, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) old_ = old;
    had_old_ = old != nullptr;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_old_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::string old_;
  bool had_old_ = false;
};

TEST(SpmLibraryTest, TheBuiltShimLoadsFromBesideTheExecutable) {
  ScopedEnv env(kSpmLibraryEnv, nullptr);
  const auto candidates = SpmLibraryCandidates();
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_THAT(candidates[0], EndsWith("/../lib/liblmtrain_spm.so"));
  EXPECT_EQ(candidates[1], "liblmtrain_spm.so");
  auto lib = LoadSpmLibrary({candidates[0]});
  ASSERT_TRUE(lib.ok()) << lib.status();
  EXPECT_TRUE(GetSpmLibrary().ok()) << GetSpmLibrary().status();
}

TEST(SpmLibraryTest, EnvironmentVariableOverridesTheSearch) {
  ScopedEnv env(kSpmLibraryEnv, "/opt/custom/liblmtrain_spm.so");
  EXPECT_THAT(SpmLibraryCandidates(),
              ElementsAre("/opt/custom/liblmtrain_spm.so"));
}

TEST(SpmLibraryTest, FailureNamesEveryPathTried) {
  auto lib = LoadSpmLibrary({"/nonexistent/liblmtrain_spm.so", "libm.so.6"});
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(lib.status().message()),
              AllOf(HasSubstr("/nonexistent/liblmtrain_spm.so ("),
                    HasSubstr("No such file"),
                    HasSubstr("libm.so.6 (not the lmtrain sentencepiece shim)"),
                    HasSubstr("LMTRAIN_SPM_LIBRARY")));
}

}  // namespace
}  // namespace lmtrain::tokenizers_internal
