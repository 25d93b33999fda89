#include "text/datasets/glue_submission.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/text/datasets/datasets_test_util.h"
#include "text/datasets/glue_reader.h"

namespace lmtrain {
namespace {

using ::testing::HasSubstr;

std::vector<TextExample> Examples(int count) {
  std::vector<TextExample> examples(count);
  for (int i = 0; i < count; ++i) examples[i].index = std::to_string(i);
  return examples;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(GlueSubmissionTest, FileNamesAreTheBenchmarks) {
  const std::vector<std::pair<GlueTask, std::string>> expected = {
      {GlueTask::kCola, "CoLA.tsv"}, {GlueTask::kSst2, "SST-2.tsv"},
      {GlueTask::kMrpc, "MRPC.tsv"}, {GlueTask::kStsb, "STS-B.tsv"},
      {GlueTask::kQqp, "QQP.tsv"},   {GlueTask::kMnli, "MNLI-m.tsv"},
      {GlueTask::kQnli, "QNLI.tsv"}, {GlueTask::kRte, "RTE.tsv"},
      {GlueTask::kWnli, "WNLI.tsv"}};
  for (const auto& [task, name] : expected) {
    EXPECT_EQ(*GlueSubmissionFileName(task, GlueSplit::kTest), name) << GlueTaskName(task);
  }
  EXPECT_EQ(*GlueSubmissionFileName(GlueTask::kMnli, GlueSplit::kTestMismatched), "MNLI-mm.tsv");
  EXPECT_FALSE(GlueSubmissionFileName(GlueTask::kRte, GlueSplit::kTestMismatched).ok());
  EXPECT_THAT(GlueSubmissionFileName(GlueTask::kRte, GlueSplit::kDev).status().message(),
              HasSubstr("test splits"));
}

TEST(GlueSubmissionTest, ClassPredictionsAreWrittenAsLabelNames) {
  GluePredictions predictions;
  predictions.label_ids = {1, 2, 0};
  auto text = FormatGlueSubmission(GlueTask::kMnli, Examples(3), predictions);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "index\tprediction\n0\tentailment\n1\tneutral\n2\tcontradiction\n");
  predictions.label_ids = {0, 1};
  EXPECT_EQ(*FormatGlueSubmission(GlueTask::kMrpc, Examples(2), predictions),
            "index\tprediction\n0\t0\n1\t1\n");
}

TEST(GlueSubmissionTest, RegressionPredictionsHaveThreeDecimals) {
  GluePredictions predictions;
  predictions.scores = {3.14159, 2.5, -0.25, 4.9996, 0.0};
  EXPECT_EQ(*FormatGlueSubmission(GlueTask::kStsb, Examples(5), predictions),
            "index\tprediction\n0\t3.142\n1\t2.500\n2\t-0.250\n3\t5.000\n4\t0.000\n");
}

TEST(GlueSubmissionTest, BadPredictionsAreRejected) {
  GluePredictions too_few;
  too_few.label_ids = {0};
  EXPECT_THAT(FormatGlueSubmission(GlueTask::kRte, Examples(2), too_few).status().message(),
              HasSubstr("1 predictions for 2 test examples"));
  GluePredictions out_of_range;
  out_of_range.label_ids = {0, 2};
  EXPECT_THAT(FormatGlueSubmission(GlueTask::kRte, Examples(2), out_of_range).status().message(),
              HasSubstr("class id 2 at position 1 is outside 0..1"));
  GluePredictions scores;
  scores.scores = {1.0};
  EXPECT_EQ(FormatGlueSubmission(GlueTask::kRte, Examples(1), scores).status().code(),
            absl::StatusCode::kInvalidArgument);
  GluePredictions ids;
  ids.label_ids = {1};
  EXPECT_EQ(FormatGlueSubmission(GlueTask::kStsb, Examples(1), ids).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(GlueSubmissionTest, WritesTheTestSetFileAtomically) {
  auto test = ReadGlueSplit(TestdataPath("glue/MNLI"), GlueTask::kMnli, GlueSplit::kTestMismatched);
  ASSERT_TRUE(test.ok()) << test.status();
  GluePredictions predictions;
  predictions.label_ids = {0, 2};
  const std::string dir =
      std::filesystem::path(::testing::TempDir()) / "datasets_submission" / "out";
  std::filesystem::remove_all(dir);
  auto path =
      WriteGlueSubmission(dir, GlueTask::kMnli, GlueSplit::kTestMismatched, *test, predictions);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, dir + "/MNLI-mm.tsv");
  EXPECT_EQ(ReadAll(*path), "index\tprediction\n0\tcontradiction\n1\tneutral\n");
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "MNLI-mm.tsv");  // no temp file left behind
  }
  EXPECT_EQ(files, 1);
  predictions.label_ids = {1, 1};  // overwriting replaces the whole file
  ASSERT_TRUE(
      WriteGlueSubmission(dir, GlueTask::kMnli, GlueSplit::kTestMismatched, *test, predictions)
          .ok());
  EXPECT_EQ(ReadAll(*path), "index\tprediction\n0\tentailment\n1\tentailment\n");
}

}  // namespace
}  // namespace lmtrain
