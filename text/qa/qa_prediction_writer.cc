#include "text/qa/qa_prediction_writer.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/atomic_file.h"

namespace lmtrain {
namespace {

using OrderedJson = nlohmann::ordered_json;

// json.dumps(value, indent=4) + "\n": ensure_ascii as Python's default.
std::string Dump(const OrderedJson& value) {
  return value.dump(4, ' ', /*ensure_ascii=*/true) + "\n";
}

// Python's float(np.float32(x)): the float widened to double.
double Widen(float value) { return static_cast<double>(value); }

OrderedJson NbestEntryJson(const QaNbestEntry& entry) {
  OrderedJson json = OrderedJson::object();
  // utils_qa.py builds the placeholder as {text, start_logit, end_logit, score} and real entries
  // as {offsets, score, start_logit, end_logit}, then pops offsets and score and adds text and
  // probability: hence the two key orders.
  if (entry.placeholder) json["text"] = entry.text;
  json["start_logit"] = Widen(entry.start_logit);
  json["end_logit"] = Widen(entry.end_logit);
  if (!entry.placeholder) json["text"] = entry.text;
  json["probability"] = entry.probability;
  return json;
}

std::string FileName(const std::string& prefix, const char* name) {
  return prefix.empty() ? std::string(name) : absl::StrCat(prefix, "_", name);
}

}  // namespace

std::string PredictionsJson(const std::vector<QaPrediction>& predictions) {
  OrderedJson json = OrderedJson::object();
  for (const QaPrediction& p : predictions) json[p.id] = p.text;
  return Dump(json);
}

std::string NbestPredictionsJson(const std::vector<QaPrediction>& predictions) {
  OrderedJson json = OrderedJson::object();
  for (const QaPrediction& p : predictions) {
    OrderedJson list = OrderedJson::array();
    for (const QaNbestEntry& entry : p.nbest) list.push_back(NbestEntryJson(entry));
    json[p.id] = std::move(list);
  }
  return Dump(json);
}

std::string NullOddsJson(const std::vector<QaPrediction>& predictions) {
  OrderedJson json = OrderedJson::object();
  for (const QaPrediction& p : predictions) {
    if (p.null_score_diff.has_value()) json[p.id] = Widen(*p.null_score_diff);
  }
  return Dump(json);
}

absl::Status WriteQaPredictionFiles(const std::vector<QaPrediction>& predictions,
                                    const std::string& output_dir, const std::string& prefix,
                                    bool version_2_with_negative) {
  std::error_code ec;
  if (!std::filesystem::is_directory(output_dir, ec)) {
    return absl::NotFoundError(
        absl::StrCat("QA predictions: output folder ", output_dir, " does not exist"));
  }
  const std::filesystem::path dir(output_dir);
  RETURN_IF_ERROR(WriteFileAtomically(
      (dir / FileName(prefix, "predictions.json")).string(), PredictionsJson(predictions)));
  RETURN_IF_ERROR(
      WriteFileAtomically((dir / FileName(prefix, "nbest_predictions.json")).string(),
                                       NbestPredictionsJson(predictions)));
  if (!version_2_with_negative) return absl::OkStatus();
  return WriteFileAtomically((dir / FileName(prefix, "null_odds.json")).string(),
                                          NullOddsJson(predictions));
}

}  // namespace lmtrain
