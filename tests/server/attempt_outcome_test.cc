// The rule that turns how an attempt's ranks ended into the job's next state.
#include "server/attempt_outcome.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lmtrain {
namespace {

using ::testing::HasSubstr;

RankExit Code(int code) {
  RankExit e;
  e.exit_code = code;
  return e;
}
RankExit StoppedByUs() {
  RankExit e = Code(143);
  e.stopped_by_us = true;
  return e;
}
RankExit Lost() {
  RankExit e = Code(-1);
  e.lost = true;
  e.error = "worker w3 lost";
  return e;
}
AttemptFacts Facts(std::vector<RankExit> ranks, std::optional<int> first_failed = {}) {
  AttemptFacts f;
  f.ranks = std::move(ranks);
  f.first_failed = first_failed;
  f.ever_started = true;
  return f;
}

TEST(AttemptOutcomeTest, AllZeroIsSuccessEvenIfAStopWasAsked) {
  AttemptFacts f = Facts({Code(0), Code(0)});
  f.preempt_requested = true;
  EXPECT_EQ(DecideAttemptOutcome(f).state, JobState::kSucceeded);
}

TEST(AttemptOutcomeTest, ExitOneIsDeterministicFailure) {
  RankExit bad = Code(1);
  bad.error = "train.csv:7: label 'x' not in the label set";
  const AttemptOutcome o = DecideAttemptOutcome(Facts({bad}, 0));
  EXPECT_EQ(o.state, JobState::kFailed);
  EXPECT_EQ(o.error, bad.error);
  EXPECT_FALSE(o.counts_as_retry);
}

TEST(AttemptOutcomeTest, TransientExitsRetryWhileRetriesLast) {
  for (RankExit e : {Code(3), Code(4), Code(137), Lost()}) {
    AttemptFacts f = Facts({StoppedByUs(), e}, 1);
    f.retries_used = 2;
    f.max_retries = 3;
    AttemptOutcome o = DecideAttemptOutcome(f);
    EXPECT_EQ(o.state, JobState::kRetrying);
    EXPECT_TRUE(o.counts_as_retry);
    EXPECT_THAT(o.reason, HasSubstr("rank 1"));
    EXPECT_THAT(o.reason, HasSubstr("retry 3 of 3"));
    f.retries_used = 3;
    o = DecideAttemptOutcome(f);
    EXPECT_EQ(o.state, JobState::kFailed);
    EXPECT_THAT(o.reason, HasSubstr("giving up after 3 retries"));
  }
}

// lm-train exits 4 when a checkpoint save fills the disk (retried like the exits above): the
// checkpoint before it stays published, so the retry resumes from it; the last failure
// carries the trainer's message.
TEST(AttemptOutcomeTest, OutOfDiskSpaceRetriesFromTheLatestCheckpointThenFailsWithTheMessage) {
  RankExit full = Code(4);
  full.error = "no space left on device writing optimizer.pt of /out/checkpoint-20 (...)";
  AttemptFacts f = Facts({full}, 0);
  f.max_retries = 1;
  EXPECT_THAT(DecideAttemptOutcome(f).reason,
              HasSubstr("lm-train exited with code 4 (out of disk space); retry 1 of 1 from the "
                        "latest checkpoint"));
  f.retries_used = 1;
  const AttemptOutcome o = DecideAttemptOutcome(f);
  EXPECT_EQ(o.state, JobState::kFailed);
  EXPECT_EQ(o.error, full.error);
}

TEST(AttemptOutcomeTest, LostBeforeStartIsFreeRetry) {
  AttemptFacts f = Facts({Lost()}, 0);
  f.ever_started = false;
  f.retries_used = 0;
  f.max_retries = 0;
  const AttemptOutcome o = DecideAttemptOutcome(f);
  EXPECT_EQ(o.state, JobState::kRetrying);
  EXPECT_FALSE(o.counts_as_retry);
}

TEST(AttemptOutcomeTest, CancelWinsOverFailureAndPreemption) {
  AttemptFacts f = Facts({StoppedByUs()});
  f.cancel_requested = true;
  f.preempt_requested = true;
  EXPECT_EQ(DecideAttemptOutcome(f).state, JobState::kCancelled);
}

TEST(AttemptOutcomeTest, PreemptionRequeuesWithoutCountingARetry) {
  AttemptFacts f = Facts({StoppedByUs(), StoppedByUs()});
  f.preempt_requested = true;
  f.preempt_reason = "preempted by job 9 (priority 80 > 0)";
  const AttemptOutcome o = DecideAttemptOutcome(f);
  EXPECT_EQ(o.state, JobState::kPreempted);
  EXPECT_EQ(o.reason, f.preempt_reason);
  EXPECT_FALSE(o.counts_as_retry);
}

TEST(AttemptOutcomeTest, DescribesExits) {
  EXPECT_EQ(DescribeRankExit(Code(3)), "lm-train exited with code 3");
  EXPECT_EQ(DescribeRankExit(Code(4)), "lm-train exited with code 4 (out of disk space)");
  RankExit killed = Code(-1);
  killed.signal = 9;
  EXPECT_EQ(DescribeRankExit(killed), "lm-train killed by signal 9");
  EXPECT_EQ(DescribeRankExit(Lost()), "worker w3 lost");
}

TEST(AttemptOutcomeTest, StoppedByUsWithoutAReasonIsPlacedAgainWithoutUsingARetry) {
  AttemptFacts f = Facts({StoppedByUs()});
  f.retries_used = 3;  // Even with none left: the server stopped it, not the job.
  const AttemptOutcome out = DecideAttemptOutcome(f);
  EXPECT_EQ(out.state, JobState::kRetrying);
  EXPECT_FALSE(out.counts_as_retry);
  EXPECT_THAT(out.reason, HasSubstr("stopped by the server"));
}

}  // namespace
}  // namespace lmtrain
