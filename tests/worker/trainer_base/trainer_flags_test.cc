#include "worker/trainer_base/trainer_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace lmtrain {
namespace {

using ::testing::HasSubstr;

TEST(TrainerFlagsTest, ParsesBothFlagForms) {
  auto flags =
      ParseTrainerFlags({"job.yaml", "--output-dir", "out", "--events-fd=3", "--threads", "2"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->job_file, "job.yaml");
  EXPECT_EQ(flags->output_dir, "out");
  EXPECT_EQ(flags->events_fd, 3);
  EXPECT_EQ(flags->threads, 2);
  EXPECT_FALSE(flags->resume);
  EXPECT_TRUE(ParseTrainerFlags({"j.yaml", "--output-dir", "o", "--resume"})->resume);
  EXPECT_FALSE(flags->overwrite_output_dir);
  EXPECT_TRUE(ParseTrainerFlags({"j.yaml", "--output-dir", "o", "--overwrite-output-dir"})
                  ->overwrite_output_dir);
}

TEST(TrainerFlagsTest, DefaultsAndHelp) {
  auto flags = ParseTrainerFlags({"--output-dir=o", "j.yaml"});
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->events_fd, -1);
  EXPECT_EQ(flags->threads, 0);
  EXPECT_TRUE(ParseTrainerFlags({"--help"})->help);
  EXPECT_THAT(TrainerUsage(), HasSubstr("--events-fd"));
}

TEST(TrainerFlagsTest, ErrorsNameTheProblem) {
  EXPECT_THAT(ParseTrainerFlags({"j.yaml"}).status().message(), HasSubstr("--output-dir"));
  EXPECT_THAT(ParseTrainerFlags({"--output-dir", "o"}).status().message(), HasSubstr("JOB.yaml"));
  EXPECT_THAT(ParseTrainerFlags({"j", "--output-dir", "o", "--bogus"}).status().message(),
              HasSubstr("unknown flag --bogus"));
  EXPECT_THAT(ParseTrainerFlags({"j", "--output-dir", "o", "--threads", "zero"}).status().message(),
              HasSubstr("--threads: expected an integer"));
  EXPECT_THAT(ParseTrainerFlags({"j", "--output-dir"}).status().message(),
              HasSubstr("--output-dir: missing value"));
  EXPECT_THAT(ParseTrainerFlags({"a", "b", "--output-dir", "o"}).status().message(),
              HasSubstr("unexpected argument 'b'"));
  EXPECT_THAT(ParseTrainerFlags({"j", "--output-dir", "o", "--threads", "-2"}).status().message(),
              HasSubstr("bad value for --threads: -2"));
}

}  // namespace
}  // namespace lmtrain
