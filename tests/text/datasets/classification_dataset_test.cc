#include "text/datasets/classification_dataset.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "tests/text/datasets/datasets_test_util.h"
#include "text/datasets/label_encoder.h"

namespace lmtrain {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<ClassificationDataset> LoadCsv(const std::string& name, const std::string& train,
                                              const std::string& validation = "",
                                              const std::string& test = "") {
  ClassificationDataOptions options;
  options.train_file = WriteTemp(name + "/train.csv", train);
  if (!validation.empty())
    options.validation_file = WriteTemp(name + "/validation.csv", validation);
  if (!test.empty()) options.test_file = WriteTemp(name + "/test.csv", test);
  return LoadClassificationDataset(options);
}

TEST(ClassificationDatasetTest, Brown3LabelsAreDiscoveredSortedFromTrain) {
  ClassificationDataOptions options;
  options.train_file = TestdataPath("brown3/train.csv");
  options.validation_file = TestdataPath("brown3/validation.csv");
  auto dataset = LoadClassificationDataset(options);
  ASSERT_TRUE(dataset.ok()) << dataset.status();
  EXPECT_EQ(dataset->train.size(), 900u);
  EXPECT_EQ(dataset->validation.size(), 300u);
  EXPECT_TRUE(dataset->test.empty());
  EXPECT_EQ(dataset->text_column, "text");  // the only column besides the label
  EXPECT_EQ(dataset->text_pair_column, "");
  EXPECT_FALSE(dataset->labels.is_regression);
  EXPECT_THAT(dataset->labels.names, ElementsAre("adventure", "government", "reviews"));
  EXPECT_EQ(dataset->labels.Id2LabelJson().dump(),
            R"({"0":"adventure","1":"government","2":"reviews"})");
  EXPECT_EQ(dataset->labels.Label2IdJson().dump(), R"({"adventure":0,"government":1,"reviews":2})");
  std::map<int, int> counts;
  for (const TextExample& example : dataset->validation) ++counts[example.label_id.value_or(-1)];
  EXPECT_THAT(counts, ElementsAre(std::pair(0, 100), std::pair(1, 100), std::pair(2, 100)));
  EXPECT_EQ(dataset->train[0].guid, "train-0");
  EXPECT_EQ(dataset->validation[299].index, "299");
  EXPECT_EQ(dataset->validation[299].line, 301);
  EXPECT_FALSE(dataset->train[0].text_a.empty());
}

TEST(ClassificationDatasetTest, IntegerLabelsSortNumericallyAndAreNamedCanonically) {
  auto dataset =
      LoadCsv("ints", "text,label\na,10\nb, 9\nc,007\nd,-1\ne,9\n", "text,label\nf,7\ng,10\n");
  ASSERT_TRUE(dataset.ok()) << dataset.status();
  EXPECT_THAT(dataset->labels.names, ElementsAre("-1", "7", "9", "10"));  // not "10" < "7"
  EXPECT_EQ(dataset->train[2].label_id, 1);                               // "007" is class "7"
  EXPECT_EQ(dataset->validation[1].label_id, 3);
}

TEST(ClassificationDatasetTest, StringLabelsSortByByte) {
  auto dataset = LoadCsv("strings", "text,label\na,b\nb,B\nc,10\nd,9\ne,a\n");
  ASSERT_TRUE(dataset.ok()) << dataset.status();
  EXPECT_THAT(dataset->labels.names, ElementsAre("10", "9", "B", "a", "b"));
  EXPECT_EQ(dataset->labels.NumLabels(), 5);
}

TEST(ClassificationDatasetTest, NonIntegerNumbersMakeARegressionTask) {
  auto dataset =
      LoadCsv("regression", "text,label\na,1\nb,2.5\nc,-0.25\n", "text,label\nd,3\ne,4.75\n");
  ASSERT_TRUE(dataset.ok()) << dataset.status();
  EXPECT_TRUE(dataset->labels.is_regression);
  EXPECT_EQ(dataset->labels.NumLabels(), 1);
  EXPECT_TRUE(dataset->labels.names.empty());
  EXPECT_EQ(dataset->labels.Id2LabelJson().dump(), R"({"0":"LABEL_0"})");
  EXPECT_FLOAT_EQ(dataset->train[1].regression_label.value_or(0), 2.5f);
  EXPECT_FLOAT_EQ(dataset->train[2].regression_label.value_or(0), -0.25f);
  EXPECT_FALSE(dataset->train[0].label_id.has_value());
  EXPECT_FLOAT_EQ(dataset->validation[1].regression_label.value_or(0), 4.75f);
  auto bad = LoadCsv("regression_bad", "text,label\na,1.5\n", "text,label\nb,high\n");
  EXPECT_THAT(bad.status().message(),
              HasSubstr("validation.csv:2: label \"high\" is not a number"));
}

TEST(ClassificationDatasetTest, JsonTypesDecideTheLabelKind) {
  ClassificationDataOptions options;
  options.train_file = WriteTemp(
      "json/ints.jsonl", "{\"text\": \"a\", \"label\": 2}\n{\"text\": \"b\", \"label\": 10}\n");
  auto ints = LoadClassificationDataset(options);
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_THAT(ints->labels.names, ElementsAre("2", "10"));
  options.train_file =
      WriteTemp("json/strings.jsonl",
                "{\"text\": \"a\", \"label\": \"2\"}\n{\"text\": \"b\", \"label\": \"10\"}\n");
  auto strings = LoadClassificationDataset(options);
  ASSERT_TRUE(strings.ok()) << strings.status();
  EXPECT_THAT(strings->labels.names, ElementsAre("10", "2"));  // JSON strings stay strings
  options.train_file =
      WriteTemp("json/floats.json", "{\"data\": [{\"text\": \"a\", \"label\": 1.0}]}");
  auto floats = LoadClassificationDataset(options);
  ASSERT_TRUE(floats.ok()) << floats.status();
  EXPECT_TRUE(floats->labels.is_regression);  // 1.0 is a float, as pyarrow types it
}

TEST(ClassificationDatasetTest, ValidationLabelOutsideTheTrainSetNamesFileAndLine) {
  auto dataset = LoadCsv("unknown", "text,label\na,pos\nb,neg\n",
                         "text,label\nc,pos\n\"multi\nline\",neg\nd,neutral\n");
  EXPECT_EQ(dataset.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(dataset.status().message(),
              HasSubstr("validation.csv:5: label \"neutral\" is not among the train split's "
                        "labels (neg, pos)"));
  auto empty = LoadCsv("empty_label", "text,label\na,pos\nb,\n");
  EXPECT_THAT(empty.status().message(), HasSubstr("train.csv:3: empty label in column \"label\""));
}

TEST(ClassificationDatasetTest, MissingColumnNamesItAndTheColumnsPresent) {
  auto dataset = LoadCsv("no_label", "sentence,category\na,x\n");
  EXPECT_EQ(dataset.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      dataset.status().message(),
      HasSubstr("train.csv: no column \"label\" (label_column; columns: sentence, category)"));
  ClassificationDataOptions options;
  options.train_file = WriteTemp("no_text/train.csv", "text,label\na,x\n");
  options.validation_file = WriteTemp("no_text/validation.csv", "body,label\na,x\n");
  options.text_column = "text";
  auto missing = LoadClassificationDataset(options);
  EXPECT_THAT(missing.status().message(),
              HasSubstr("validation.csv: no column \"text\" (text_column; columns: body, label)"));
}

TEST(ClassificationDatasetTest, TextColumnsAreChosenAsRunGlueDoes) {
  auto pairs = LoadCsv("pairs", "idx,sentence2,label,sentence1\n0,b,x,a\n");
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  EXPECT_EQ(pairs->text_column, "sentence1");
  EXPECT_EQ(pairs->text_pair_column, "sentence2");
  EXPECT_EQ(pairs->train[0].text_a, "a");
  EXPECT_EQ(pairs->train[0].text_b.value_or(""), "b");
  auto first_two = LoadCsv("first_two", "label,question,passage,extra\nx,q,p,e\n");
  ASSERT_TRUE(first_two.ok()) << first_two.status();
  EXPECT_EQ(first_two->text_column, "question");
  EXPECT_EQ(first_two->text_pair_column, "passage");
  ClassificationDataOptions options;
  options.train_file = WriteTemp("explicit/train.tsv", "id\tbody\ttag\n1\thello\tx\n");
  options.text_column = "body";
  options.label_column = "tag";
  auto explicit_columns = LoadClassificationDataset(options);
  ASSERT_TRUE(explicit_columns.ok()) << explicit_columns.status();
  EXPECT_EQ(explicit_columns->train[0].text_a, "hello");
  EXPECT_FALSE(explicit_columns->train[0].text_b.has_value());
}

TEST(ClassificationDatasetTest, TestSplitMayBeUnlabelled) {
  auto dataset = LoadCsv("test_split", "text,label\na,1\nb,2\n", "", "text,label\nc,2\nd,-1\ne,\n");
  ASSERT_TRUE(dataset.ok()) << dataset.status();
  ASSERT_EQ(dataset->test.size(), 3u);
  EXPECT_EQ(dataset->test[0].label_id, 1);
  EXPECT_FALSE(dataset->test[1].label_id.has_value());  // run_glue passes -1 through
  EXPECT_FALSE(dataset->test[2].label_id.has_value());
  auto no_column = LoadCsv("test_no_label", "text,label\na,x\n", "", "text\nc\n");
  ASSERT_TRUE(no_column.ok()) << no_column.status();
  EXPECT_FALSE(no_column->test[0].label_id.has_value());
  auto bad = LoadCsv("test_bad", "text,label\na,x\n", "", "text,label\nc,y\n");
  EXPECT_THAT(bad.status().message(), HasSubstr("test.csv:2: label \"y\""));
}

TEST(ClassificationDatasetTest, NullTextIsAnError) {
  ClassificationDataOptions options;
  options.train_file =
      WriteTemp("null_text/train.jsonl",
                "{\"text\": \"a\", \"label\": \"x\"}\n{\"text\": null, \"label\": \"x\"}\n");
  auto dataset = LoadClassificationDataset(options);
  EXPECT_THAT(dataset.status().message(), HasSubstr("train.jsonl:2: column \"text\" is null"));
}

}  // namespace
}  // namespace lmtrain
