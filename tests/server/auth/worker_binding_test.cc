// WorkerBinding: only registration binds a worker id to a worker token's user.
#include "server/auth/worker_binding.h"

#include <gtest/gtest.h>

namespace lmtrain {
namespace {

Principal WorkerToken(const std::string& user) {
  Principal p;
  p.user = user;
  p.role = Role::kWorker;
  p.authenticated = true;
  return p;
}

TEST(WorkerBindingTest, ARegisteredIdBelongsToItsToken) {
  WorkerBinding binding;
  binding.Bind("w1-0a", WorkerToken("gpu-box"));
  EXPECT_TRUE(binding.Check("w1-0a", WorkerToken("gpu-box")).ok());
  const absl::Status other = binding.Check("w1-0a", WorkerToken("intruder"));
  EXPECT_EQ(other.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(other.message().find("registered by 'gpu-box'"), std::string_view::npos) << other;
  EXPECT_TRUE(binding.Check("w1-0a", Principal::AuthDisabled()).ok());
}

// After an lm-server restart nothing is bound: the first token to use an old id must not claim
// it, or the worker that owned it would be locked out instead of told to register again.
TEST(WorkerBindingTest, UsingAnUnknownIdClaimsNothing) {
  WorkerBinding binding;
  EXPECT_TRUE(binding.Check("w3-old", WorkerToken("intruder")).ok());  // Dispatcher says: register.
  EXPECT_TRUE(binding.Check("w3-old", WorkerToken("gpu-box")).ok());
  binding.Bind("w3-old", WorkerToken("gpu-box"));
  EXPECT_EQ(binding.Check("w3-old", WorkerToken("intruder")).code(),
            absl::StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace lmtrain
