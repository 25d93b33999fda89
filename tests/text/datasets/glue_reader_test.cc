#include "text/datasets/glue_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/text/datasets/datasets_test_util.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string GlueDir(const std::string& task_folder) { return TestdataPath("glue/" + task_folder); }

std::vector<TextExample> Read(const std::string& folder, GlueTask task, GlueSplit split) {
  auto examples = ReadGlueSplit(GlueDir(folder), task, split);
  EXPECT_TRUE(examples.ok()) << examples.status();
  return examples.ok() ? *examples : std::vector<TextExample>();
}

std::vector<int> LabelIds(const std::vector<TextExample>& examples) {
  std::vector<int> ids;
  for (const TextExample& example : examples) ids.push_back(example.label_id.value_or(-1));
  return ids;
}

std::vector<std::string> Guids(const std::vector<TextExample>& examples) {
  std::vector<std::string> guids;
  for (const TextExample& example : examples) guids.push_back(example.guid);
  return guids;
}

TEST(GlueTaskTest, NamesLabelsAndFiles) {
  EXPECT_EQ(*GlueTaskFromName("SST-2"), GlueTask::kSst2);
  EXPECT_EQ(*GlueTaskFromName("sst2"), GlueTask::kSst2);
  EXPECT_EQ(*GlueTaskFromName("sts-b"), GlueTask::kStsb);
  EXPECT_EQ(*GlueTaskFromName("MNLI"), GlueTask::kMnli);
  EXPECT_THAT(GlueTaskFromName("superglue").status().message(), HasSubstr("unknown GLUE task"));
  EXPECT_EQ(AllGlueTasks().size(), 9u);
  for (GlueTask task : AllGlueTasks()) EXPECT_EQ(*GlueTaskFromName(GlueTaskName(task)), task);
  EXPECT_THAT(GlueClassLabels(GlueTask::kMnli).names,
              ElementsAre("contradiction", "entailment", "neutral"));
  EXPECT_THAT(GlueClassLabels(GlueTask::kRte).names, ElementsAre("entailment", "not_entailment"));
  EXPECT_THAT(GlueClassLabels(GlueTask::kQqp).names, ElementsAre("0", "1"));
  EXPECT_TRUE(GlueClassLabels(GlueTask::kStsb).is_regression);
  EXPECT_EQ(GlueClassLabels(GlueTask::kStsb).NumLabels(), 1);
  EXPECT_EQ(*GlueFileName(GlueTask::kMnli, GlueSplit::kDev), "dev_matched.tsv");
  EXPECT_EQ(*GlueFileName(GlueTask::kMnli, GlueSplit::kTestMismatched), "test_mismatched.tsv");
  EXPECT_EQ(*GlueFileName(GlueTask::kRte, GlueSplit::kTest), "test.tsv");
  EXPECT_FALSE(GlueFileName(GlueTask::kRte, GlueSplit::kDevMismatched).ok());
  EXPECT_EQ(GlueSplits(GlueTask::kMnli).size(), 5u);
  EXPECT_EQ(GlueSplits(GlueTask::kCola).size(), 3u);
}

TEST(GlueReaderTest, ColaHasNoHeaderInLabelledFilesAndOneInTest) {
  const auto train = Read("CoLA", GlueTask::kCola, GlueSplit::kTrain);
  ASSERT_EQ(train.size(), 3u);
  EXPECT_EQ(train[0].text_a,
            "Our friends won't buy this analysis, let alone the next one we propose.");
  EXPECT_FALSE(train[0].text_b.has_value());
  EXPECT_THAT(LabelIds(train), ElementsAre(1, 0, 1));
  EXPECT_THAT(Guids(train), ElementsAre("train-0", "train-1", "train-2"));
  EXPECT_EQ(train[0].line, 1);
  EXPECT_EQ(train[2].index, "2");
  const auto test = Read("CoLA", GlueTask::kCola, GlueSplit::kTest);
  ASSERT_EQ(test.size(), 2u);
  EXPECT_EQ(test[1].text_a, "The car honked its way down the road.");
  EXPECT_FALSE(test[1].label_id.has_value());
  EXPECT_THAT(Guids(test), ElementsAre("test-0", "test-1"));  // the processor slices lines[1:]
  EXPECT_EQ(test[1].index, "1");
  EXPECT_EQ(test[1].line, 3);
  EXPECT_EQ(Read("CoLA", GlueTask::kCola, GlueSplit::kDev).size(), 2u);
}

TEST(GlueReaderTest, Sst2AndMrpcCountRowsFromTheHeader) {
  const auto sst = Read("SST-2", GlueTask::kSst2, GlueSplit::kTrain);
  ASSERT_EQ(sst.size(), 3u);
  EXPECT_EQ(sst[0].text_a, "hide new secretions from the parental units ");  // space kept
  EXPECT_THAT(LabelIds(sst), ElementsAre(0, 0, 1));
  EXPECT_THAT(Guids(sst), ElementsAre("train-1", "train-2", "train-3"));
  const auto sst_test = Read("SST-2", GlueTask::kSst2, GlueSplit::kTest);
  ASSERT_EQ(sst_test.size(), 2u);
  EXPECT_EQ(sst_test[0].text_a, "uneasy mishmash of styles and genres .");
  EXPECT_EQ(sst_test[0].guid, "test-1");

  const auto mrpc = Read("MRPC", GlueTask::kMrpc, GlueSplit::kTrain);  // starts with a BOM
  ASSERT_EQ(mrpc.size(), 3u);
  EXPECT_EQ(mrpc[0].text_a,
            "Amrozi accused his brother , whom he called \" the witness \" , of deliberately "
            "distorting his evidence .");  // quotes kept: QUOTE_NONE
  EXPECT_EQ(mrpc[0].text_b.value_or(""),
            "Referring to him as only \" the witness \" , Amrozi accused his brother of "
            "deliberately distorting his evidence .");
  EXPECT_THAT(LabelIds(mrpc), ElementsAre(1, 0, 1));
  EXPECT_EQ(mrpc[2].guid, "train-3");
  const auto mrpc_test = Read("MRPC", GlueTask::kMrpc, GlueSplit::kTest);
  ASSERT_EQ(mrpc_test.size(), 2u);
  EXPECT_EQ(mrpc_test[1].index, "1");
  EXPECT_EQ(mrpc_test[1].guid, "test-2");  // the row counter, not the index column
  EXPECT_TRUE(mrpc_test[1].text_b.has_value());
  EXPECT_EQ(Read("MRPC", GlueTask::kMrpc, GlueSplit::kDev).size(), 2u);
}

TEST(GlueReaderTest, StsbIsRegressionWithTheScoreLast) {
  const auto train = Read("STS-B", GlueTask::kStsb, GlueSplit::kTrain);
  ASSERT_EQ(train.size(), 4u);
  EXPECT_EQ(train[1].text_a, "A man is playing a large flute.");
  EXPECT_EQ(train[1].text_b.value_or(""), "A man is playing a flute.");
  EXPECT_FALSE(train[1].label_id.has_value());
  EXPECT_FLOAT_EQ(train[1].regression_label.value_or(-1), 3.8f);
  EXPECT_FLOAT_EQ(train[3].regression_label.value_or(-1), 0.0f);
  EXPECT_EQ(train[2].guid, "train-2");
  const auto test = Read("STS-B", GlueTask::kStsb, GlueSplit::kTest);
  ASSERT_EQ(test.size(), 2u);
  EXPECT_FALSE(test[0].regression_label.has_value());
  EXPECT_EQ(Read("STS-B", GlueTask::kStsb, GlueSplit::kDev).size(), 2u);
}

TEST(GlueReaderTest, QqpSkipsRowsTooShortAsTheProcessorDoes) {
  const auto train = Read("QQP", GlueTask::kQqp, GlueSplit::kTrain);
  ASSERT_EQ(train.size(), 3u);  // the 4-column row on line 4 is skipped
  EXPECT_THAT(Guids(train), ElementsAre("train-133273", "train-402555", "train-150662"));
  EXPECT_THAT(LabelIds(train), ElementsAre(0, 1, 1));
  EXPECT_EQ(train[2].line, 5);
  const auto test = Read("QQP", GlueTask::kQqp, GlueSplit::kTest);
  ASSERT_EQ(test.size(), 2u);
  EXPECT_EQ(test[1].text_b.value_or(""), "Which fish would survive in salt water?");
  EXPECT_EQ(Read("QQP", GlueTask::kQqp, GlueSplit::kDev).size(), 2u);
}

TEST(GlueReaderTest, MnliReadsTwelveAndSixteenColumnFilesAndBothTestSets) {
  const auto train = Read("MNLI", GlueTask::kMnli, GlueSplit::kTrain);
  ASSERT_EQ(train.size(), 4u);
  EXPECT_EQ(train[0].text_a, "Conceptually cream skimming has two basic dimensions.");
  EXPECT_THAT(LabelIds(train), ElementsAre(2, 1, 1, 0));  // neutral, entailment ×2, contradiction
  const auto dev = Read("MNLI", GlueTask::kMnli, GlueSplit::kDev);
  ASSERT_EQ(dev.size(), 2u);
  EXPECT_THAT(LabelIds(dev), ElementsAre(2, 0));  // gold_label, the 16th column
  EXPECT_THAT(Guids(dev), ElementsAre("dev_matched-0", "dev_matched-1"));
  const auto mismatched = Read("MNLI", GlueTask::kMnli, GlueSplit::kDevMismatched);
  EXPECT_THAT(LabelIds(mismatched), ElementsAre(0, 1));
  EXPECT_EQ(mismatched[0].guid, "dev_mismatched-0");
  EXPECT_EQ(Read("MNLI", GlueTask::kMnli, GlueSplit::kTest).size(), 1u);
  const auto test_mm = Read("MNLI", GlueTask::kMnli, GlueSplit::kTestMismatched);
  ASSERT_EQ(test_mm.size(), 2u);
  EXPECT_EQ(test_mm[1].text_b.value_or(""), "Women do not get to choose.");
  EXPECT_EQ(test_mm[1].guid, "test_mismatched-1");
}

TEST(GlueReaderTest, QnliRteWnliPairsWithTheLabelLast) {
  const auto qnli = Read("QNLI", GlueTask::kQnli, GlueSplit::kTrain);
  EXPECT_THAT(LabelIds(qnli), ElementsAre(1, 1, 0));
  EXPECT_EQ(Read("QNLI", GlueTask::kQnli, GlueSplit::kDev).size(), 1u);
  EXPECT_EQ(Read("QNLI", GlueTask::kQnli, GlueSplit::kTest).size(), 1u);
  const auto rte = Read("RTE", GlueTask::kRte, GlueSplit::kDev);
  ASSERT_EQ(rte.size(), 2u);
  EXPECT_EQ(rte[0].text_b.value_or(""), "Christopher Reeve had an accident.");
  EXPECT_THAT(LabelIds(rte), ElementsAre(1, 0));
  EXPECT_EQ(Read("RTE", GlueTask::kRte, GlueSplit::kTrain).size(), 2u);
  EXPECT_EQ(Read("RTE", GlueTask::kRte, GlueSplit::kTest).size(), 1u);
  EXPECT_THAT(LabelIds(Read("WNLI", GlueTask::kWnli, GlueSplit::kTrain)), ElementsAre(1, 1, 1, 0));
  EXPECT_EQ(Read("WNLI", GlueTask::kWnli, GlueSplit::kDev).size(), 1u);
  EXPECT_EQ(Read("WNLI", GlueTask::kWnli, GlueSplit::kTest)[0].index, "0");
}

TEST(GlueReaderTest, WrongColumnCountNamesFileAndLine) {
  const std::string path = WriteTemp(
      "mrpc_short/train.tsv",
      "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\ta\tb\n0\t3\t4\tonly one string\n");
  auto examples = ReadGlueFile(path, GlueTask::kMrpc, GlueSplit::kTrain);
  EXPECT_EQ(examples.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(examples.status().message(),
              HasSubstr("train.tsv:3: expected 5 tab-separated columns for mrpc train, got 4"));
  // An empty line is a row with no cells, as Python's csv yields it.
  auto blank = ReadGlueFile(WriteTemp("rte_blank.tsv", "index\ts1\ts2\tlabel\n\n"), GlueTask::kRte,
                            GlueSplit::kDev);
  EXPECT_THAT(blank.status().message(), HasSubstr("rte_blank.tsv:2: expected 4"));
}

TEST(GlueReaderTest, LabelOutsideTheTaskLabelsIsAnError) {
  auto examples = ReadGlueFile(
      WriteTemp("rte_label.tsv", "index\ts1\ts2\tlabel\n0\ta\tb\tentailment\n1\ta\tb\tneutral\n"),
      GlueTask::kRte, GlueSplit::kTrain);
  EXPECT_THAT(examples.status().message(),
              HasSubstr("rte_label.tsv:3: label \"neutral\" is not one of the rte labels "
                        "(entailment, not_entailment)"));
  auto qqp = ReadGlueFile(WriteTemp("qqp_label.tsv", "id\tq1\tq2\tt1\tt2\tdup\n0\t1\t2\ta\tb\t2\n"),
                          GlueTask::kQqp, GlueSplit::kDev);
  EXPECT_THAT(qqp.status().message(), HasSubstr("qqp_label.tsv:2: label \"2\""));
  auto stsb =
      ReadGlueFile(WriteTemp("stsb_score.tsv",
                             "h\th\th\th\th\th\th\th\th\th\n0\tg\tf\ty\to\tn\tn\ta\tb\thigh\n"),
                   GlueTask::kStsb, GlueSplit::kTrain);
  EXPECT_THAT(stsb.status().message(),
              HasSubstr("stsb_score.tsv:2: stsb score \"high\" is not a number"));
}

TEST(GlueReaderTest, MissingFileIsNotFound) {
  auto examples = ReadGlueSplit(GlueDir("RTE"), GlueTask::kMnli, GlueSplit::kDev);
  EXPECT_EQ(examples.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(examples.status().message(), HasSubstr("dev_matched.tsv"));
  EXPECT_EQ(
      ReadGlueSplit(GlueDir("RTE"), GlueTask::kRte, GlueSplit::kDevMismatched).status().code(),
      absl::StatusCode::kInvalidArgument);
}

TEST(GlueReaderTest, ParaphraseDataReadsAsMrpc) {
  const std::string dir = TestdataPath("paraphrase");
  const auto train = ReadGlueSplit(dir, GlueTask::kMrpc, GlueSplit::kTrain);
  const auto dev = ReadGlueSplit(dir, GlueTask::kMrpc, GlueSplit::kDev);
  const auto test = ReadGlueSplit(dir, GlueTask::kMrpc, GlueSplit::kTest);
  ASSERT_TRUE(train.ok()) << train.status();
  ASSERT_TRUE(dev.ok()) << dev.status();
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_EQ(train->size(), 1000u);
  EXPECT_EQ(dev->size(), 300u);
  EXPECT_EQ(test->size(), 100u);
  int positives = 0;
  for (const TextExample& example : *dev) positives += example.label_id.value_or(-1) == 1;
  EXPECT_EQ(positives, 150);
  EXPECT_EQ(test->back().index, "99");
  EXPECT_FALSE(test->back().label_id.has_value());
}

}  // namespace
}  // namespace lmtrain
