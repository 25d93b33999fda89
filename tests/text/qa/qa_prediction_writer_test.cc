// The prediction files, byte for byte as Python's json.dumps(..., indent=4) + "\n" prints them
// (expected texts produced with Python 3.11's json module from the same values).
#include "text/qa/qa_prediction_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace lmtrain {
namespace {

std::vector<QaPrediction> Predictions() {
  QaPrediction q1;
  q1.id = "q1";
  q1.text = "café “ok” 😀";
  q1.nbest.push_back(QaNbestEntry{q1.text, 0.1f, -2.5f, -2.4f, static_cast<float>(0.75), false});
  q1.null_score_diff = -3.5f;
  QaPrediction q2;
  q2.id = "q2";
  q2.text = "";
  q2.nbest.push_back(QaNbestEntry{"empty", 0.0f, 0.0f, 0.0, 1.0, true});
  q2.null_score_diff = 1e-5f;
  QaPrediction q3;
  q3.id = "q3";
  q3.text = "a\"b\\c\n\x7f";
  return {q1, q2, q3};
}

// json.dumps({"q1": [{"start_logit": float(np.float32(0.1)), "end_logit": -2.5, "text": ...,
// "probability": 0.75}], "q2": [{"text": "empty", "start_logit": 0.0, "end_logit": 0.0,
// "probability": 1.0}], "q3": []}, indent=4)
constexpr char kNbest[] = R"({
    "q1": [
        {
            "start_logit": 0.10000000149011612,
            "end_logit": -2.5,
            "text": "caf\u00e9 \u201cok\u201d \ud83d\ude00",
            "probability": 0.75
        }
    ],
    "q2": [
        {
            "text": "empty",
            "start_logit": 0.0,
            "end_logit": 0.0,
            "probability": 1.0
        }
    ],
    "q3": []
}
)";

constexpr char kPredictions[] = R"({
    "q1": "caf\u00e9 \u201cok\u201d \ud83d\ude00",
    "q2": "",
    "q3": "a\"b\\c\n\u007f"
}
)";

// float(np.float32(1e-5)) is 9.999999747378752e-06; q3 has no null odds.
constexpr char kNullOdds[] = R"({
    "q1": -3.5,
    "q2": 9.999999747378752e-06
}
)";

TEST(QaPredictionWriterTest, JsonTextsMatchPython) {
  EXPECT_EQ(PredictionsJson(Predictions()), kPredictions);
  EXPECT_EQ(NbestPredictionsJson(Predictions()), kNbest);
  EXPECT_EQ(NullOddsJson(Predictions()), kNullOdds);
  EXPECT_EQ(PredictionsJson({}), "{}\n");
}

std::string Read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(QaPredictionWriterTest, WritesTheFilesWithAndWithoutPrefix) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "qa_writer";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(WriteQaPredictionFiles(Predictions(), dir.string(), "", true).ok());
  EXPECT_EQ(Read(dir / "predictions.json"), kPredictions);
  EXPECT_EQ(Read(dir / "nbest_predictions.json"), kNbest);
  EXPECT_EQ(Read(dir / "null_odds.json"), kNullOdds);

  ASSERT_TRUE(WriteQaPredictionFiles(Predictions(), dir.string(), "eval", false).ok());
  EXPECT_EQ(Read(dir / "eval_predictions.json"), kPredictions);
  EXPECT_TRUE(std::filesystem::exists(dir / "eval_nbest_predictions.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "eval_null_odds.json"));  // v1: none.
  // Only the published files are left (no temp files).
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 5);

  const absl::Status missing =
      WriteQaPredictionFiles(Predictions(), (dir / "nope").string(), "", false);
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.message()), ::testing::HasSubstr("nope"));
}

}  // namespace
}  // namespace lmtrain
