// TensorBoardCallback: HF's tags and default folder, the reporter → callback path, and the
// event file it leaves (read back record by record).
#include "worker/trainer_base/tensorboard_callback.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "common/tensorboard/crc32c.h"
#include "common/tensorboard/event_proto.h"
#include "worker/trainer_base/training_reporter.h"

namespace lmtrain {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class FixedClock final : public Clock {
 public:
  int64_t NowMs() const override { return 1700000000000; }
};

class RecordingCallback final : public LogCallback {
 public:
  void OnLog(const nlohmann::json& logs, int64_t step) override { calls.emplace_back(logs, step); }
  std::vector<std::pair<nlohmann::json, int64_t>> calls;
};

// The payloads of a TFRecord file (lengths and CRCs are checked by tensorboard_test).
std::vector<std::string> Records(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  const std::string file = s.str();
  std::vector<std::string> records;
  for (size_t at = 0; at + 16 <= file.size();) {
    uint64_t length = 0;
    for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<uint8_t>(file[at + i]);
    records.push_back(file.substr(at + 12, length));
    at += 16 + length;
  }
  return records;
}

TEST(TensorBoardCallbackTest, TagsFollowHfRewriteLogs) {
  EXPECT_EQ(TensorBoardTag("loss"), "train/loss");
  EXPECT_EQ(TensorBoardTag("learning_rate"), "train/learning_rate");
  EXPECT_EQ(TensorBoardTag("epoch"), "train/epoch");
  EXPECT_EQ(TensorBoardTag("train_runtime"), "train/train_runtime");
  EXPECT_EQ(TensorBoardTag("eval_loss"), "eval/loss");
  EXPECT_EQ(TensorBoardTag("eval_accuracy"), "eval/accuracy");
  EXPECT_EQ(TensorBoardTag("test_f1"), "test/f1");
  EXPECT_EQ(TensorBoardTag("perplexity"), "eval/perplexity");
}

TEST(TensorBoardCallbackTest, DefaultLoggingDirIsHfs) {
  setenv("TZ", "UTC", 1);
  tzset();
  // 2023-11-14 22:13:20 UTC.
  EXPECT_EQ(DefaultLoggingDir("/out", 1700000000000, "node7"), "/out/runs/Nov14_22-13-20_node7");
  EXPECT_EQ(ResolveLoggingDir("/out", "", 1700000000000, "node7"),
            "/out/runs/Nov14_22-13-20_node7");
  EXPECT_EQ(ResolveLoggingDir("/out", "tb/./run1", 1700000000000, "node7"), "/out/tb/run1");
}

TEST(TensorBoardCallbackTest, ReporterPassesEachLogWithoutStep) {
  NullEventSink sink;
  RecordingCallback callback;
  std::ostringstream out, err;
  TrainingReporter reporter(&sink, &out, &err, &callback);
  TrainLogRecord train;
  train.step = 10;
  train.loss = 3.210049;
  train.learning_rate = 1e-3;
  train.grad_norm = 1.5;
  train.epoch = 0.5;
  train.tokens_per_second = 1234;
  reporter.OnTrainLog(train);
  EvalLogRecord eval;
  eval.step = 10;
  eval.eval_loss = 2.0;
  eval.metrics = {{"perplexity", 7.389}};
  reporter.OnEval(eval);
  ASSERT_EQ(callback.calls.size(), 2u);
  EXPECT_EQ(callback.calls[0].second, 10);
  EXPECT_EQ(callback.calls[0].first, (nlohmann::json{{"loss", 3.21},
                                                     {"learning_rate", 1e-3},
                                                     {"grad_norm", 1.5},
                                                     {"epoch", 0.5},
                                                     {"tokens_per_second", 1234.0}}));
  EXPECT_FALSE(callback.calls[1].first.contains("step"));
  EXPECT_EQ(callback.calls[1].first["eval_loss"], 2.0);
  EXPECT_EQ(callback.calls[1].first["perplexity"], 7.389);
  // The history keeps its step and gains no tokens_per_second.
  EXPECT_EQ(reporter.log_history()[0]["step"], 10);
  EXPECT_FALSE(reporter.log_history()[0].contains("tokens_per_second"));
}

TEST(TensorBoardCallbackTest, WritesEveryNumberAsAScalarAtTheGlobalStep) {
  const fs::path dir = fs::path(::testing::TempDir()) / "tensorboard_callback_test";
  fs::remove_all(dir);
  FixedClock clock;
  std::ostringstream err;
  std::string file;
  {
    TensorBoardCallback callback({(dir / "run").string(), &err, "node7", &clock});
    EXPECT_FALSE(fs::exists(dir)) << "created before the first log";
    callback.OnLog({{"loss", 2.5}, {"note", "text"}, {"epoch", 1}}, 4);
    callback.OnLog({{"eval_loss", 0.5}}, 8);
    file = callback.event_file();
  }
  EXPECT_EQ(file, (dir / "run" / "events.out.tfevents.1700000000.node7").string());
  const double t = 1700000000.0;
  using tensorboard::EncodeScalarEvent;
  EXPECT_EQ(Records(file),
            (std::vector<std::string>{tensorboard::EncodeFileVersionEvent(t, "brain.Event:2"),
                                      EncodeScalarEvent(t, 4, "train/epoch", 1.0f),
                                      EncodeScalarEvent(t, 4, "train/loss", 2.5f),
                                      EncodeScalarEvent(t, 8, "eval/loss", 0.5f)}));
  EXPECT_TRUE(err.str().empty()) << err.str();
}

TEST(TensorBoardCallbackTest, AFolderThatCannotBeMadeIsOneWarning) {
  const fs::path blocker = fs::path(::testing::TempDir()) / "tensorboard_callback_blocker";
  std::ofstream(blocker) << "x";
  std::ostringstream err;
  TensorBoardCallback callback({(blocker / "run").string(), &err, "node7", nullptr});
  callback.OnLog({{"loss", 1.0}}, 1);
  callback.OnLog({{"loss", 0.5}}, 2);
  EXPECT_THAT(err.str(), HasSubstr("warning: TensorBoard: cannot create"));
  EXPECT_THAT(err.str(), HasSubstr("no further TensorBoard scalars are written"));
  EXPECT_EQ(err.str().find("warning", 1), std::string::npos) << "warned twice: " << err.str();
  EXPECT_EQ(callback.event_file(), "");
}

}  // namespace
}  // namespace lmtrain
