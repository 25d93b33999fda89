// The job state machine of common/job_state.h: names, terminal states and every transition.
#include "common/job_state.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

namespace lmtrain {
namespace {

constexpr const auto& kAll = kAllJobStates;

TEST(JobStateTest, NamesRoundTrip) {
  for (JobState s : kAll) {
    EXPECT_EQ(ParseJobState(JobStateName(s)), s) << JobStateName(s);
  }
  EXPECT_EQ(JobStateName(JobState::kQueued), "QUEUED");
  EXPECT_EQ(JobStateName(JobState::kRunning), "RUNNING");
  EXPECT_EQ(JobStateName(JobState::kSucceeded), "SUCCEEDED");
  EXPECT_EQ(JobStateName(JobState::kFailed), "FAILED");
  EXPECT_EQ(JobStateName(JobState::kCancelled), "CANCELLED");
  EXPECT_EQ(JobStateName(JobState::kScheduled), "SCHEDULED");
  EXPECT_EQ(JobStateName(JobState::kPreempted), "PREEMPTED");
  EXPECT_EQ(JobStateName(JobState::kRetrying), "RETRYING");
  EXPECT_EQ(std::size(kAll), 8u);
}

TEST(JobStateTest, UnknownNamesDoNotParse) {
  for (const char* name : {"", "queued", "Running", "CANCELED", "UNKNOWN", "QUEUED "}) {
    EXPECT_EQ(ParseJobState(name), std::nullopt) << "'" << name << "'";
  }
  // A value outside the enum (e.g. a corrupt database row) is named, not undefined behaviour.
  EXPECT_EQ(JobStateName(static_cast<JobState>(99)), "UNKNOWN");
}

TEST(JobStateTest, TerminalStates) {
  EXPECT_FALSE(IsTerminal(JobState::kQueued));
  EXPECT_FALSE(IsTerminal(JobState::kRunning));
  EXPECT_TRUE(IsTerminal(JobState::kSucceeded));
  EXPECT_TRUE(IsTerminal(JobState::kFailed));
  EXPECT_TRUE(IsTerminal(JobState::kCancelled));
  EXPECT_FALSE(IsTerminal(JobState::kScheduled));
  EXPECT_FALSE(IsTerminal(JobState::kPreempted));
  EXPECT_FALSE(IsTerminal(JobState::kRetrying));
}

// The edges of the diagram in job_state.h, and nothing else, over all 64 ordered pairs.
TEST(JobStateTest, ExactlyTheDiagramsTransitionsAreAllowed) {
  using S = JobState;
  const std::set<std::pair<JobState, JobState>> allowed = {
      {S::kQueued, S::kScheduled},  {S::kQueued, S::kCancelled},    {S::kQueued, S::kFailed},
      {S::kScheduled, S::kRunning}, {S::kScheduled, S::kPreempted}, {S::kScheduled, S::kRetrying},
      {S::kScheduled, S::kFailed},  {S::kScheduled, S::kCancelled}, {S::kRunning, S::kSucceeded},
      {S::kRunning, S::kFailed},    {S::kRunning, S::kCancelled},   {S::kRunning, S::kPreempted},
      {S::kRunning, S::kRetrying},  {S::kPreempted, S::kQueued},    {S::kPreempted, S::kCancelled},
      {S::kRetrying, S::kQueued},   {S::kRetrying, S::kFailed},     {S::kRetrying, S::kCancelled},
  };
  for (JobState from : kAll) {
    for (JobState to : kAll) {
      EXPECT_EQ(CanTransition(from, to), allowed.count({from, to}) > 0)
          << JobStateName(from) << " -> " << JobStateName(to);
    }
  }
}

TEST(JobStateTest, TerminalStatesNeverChange) {
  for (JobState from : kAll) {
    if (!IsTerminal(from)) continue;
    for (JobState to : kAll) {
      EXPECT_FALSE(CanTransition(from, to)) << JobStateName(from) << " -> " << JobStateName(to);
    }
  }
}

}  // namespace
}  // namespace lmtrain
