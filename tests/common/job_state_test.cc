// The job state machine of common/job_state.h: names, terminal states and every transition.
#include "common/job_state.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

namespace lmtrain {
namespace {

constexpr JobState kAll[] = {JobState::kQueued, JobState::kRunning, JobState::kSucceeded,
                             JobState::kFailed, JobState::kCancelled};

TEST(JobStateTest, NamesRoundTrip) {
  for (JobState s : kAll) {
    EXPECT_EQ(ParseJobState(JobStateName(s)), s) << JobStateName(s);
  }
  EXPECT_EQ(JobStateName(JobState::kQueued), "QUEUED");
  EXPECT_EQ(JobStateName(JobState::kRunning), "RUNNING");
  EXPECT_EQ(JobStateName(JobState::kSucceeded), "SUCCEEDED");
  EXPECT_EQ(JobStateName(JobState::kFailed), "FAILED");
  EXPECT_EQ(JobStateName(JobState::kCancelled), "CANCELLED");
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
}

// The edges of the diagram in job_state.h, and nothing else, over all 25 ordered pairs.
TEST(JobStateTest, ExactlyTheDiagramsTransitionsAreAllowed) {
  const std::set<std::pair<JobState, JobState>> allowed = {
      {JobState::kQueued, JobState::kRunning}, {JobState::kQueued, JobState::kCancelled},
      {JobState::kQueued, JobState::kFailed},  {JobState::kRunning, JobState::kSucceeded},
      {JobState::kRunning, JobState::kFailed}, {JobState::kRunning, JobState::kCancelled},
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
