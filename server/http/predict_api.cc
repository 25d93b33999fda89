#include "server/http/predict_api.h"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace lmtrain {
namespace {
using nlohmann::json;

constexpr char kBodyShape[] =
    "request body must be a JSON object with one of \"fill_mask\" (a text with the mask "
    "token) or \"generate\" (a prompt), and optional \"top_k\", \"max_new_tokens\", \"seed\", "
    "\"step\" (integers) and \"temperature\" (a number)";

absl::Status KeyError(const std::string& key, const std::string& expected) {
  return absl::InvalidArgumentError(
      absl::StrCat("predict: \"", key.substr(0, 64), "\" must be ", expected));
}

absl::StatusOr<std::string> TextField(const std::string& key, const json& value) {
  if (!value.is_string()) return KeyError(key, "a string");
  return value.get<std::string>();
}

// An integer in [min, max]; JSON numbers with a fraction are refused, not truncated.
absl::StatusOr<int64_t> IntField(const std::string& key, const json& value, int64_t min,
                                 int64_t max) {
  const bool integral = value.is_number_integer() || value.is_number_unsigned();
  if (!integral || (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(INT64_MAX)) ||
      value.get<int64_t>() < min || value.get<int64_t>() > max) {
    return KeyError(key, absl::StrCat("an integer in [", min, ", ", max, "]"));
  }
  return value.get<int64_t>();
}

// Sets the PredictInput field named `key` from `value`.
absl::Status SetField(const std::string& key, const json& value, PredictInput* input) {
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  if (key == "fill_mask") {
    ASSIGN_OR_RETURN(input->fill_mask, TextField(key, value));
  } else if (key == "generate") {
    ASSIGN_OR_RETURN(input->generate, TextField(key, value));
  } else if (key == "top_k") {
    ASSIGN_OR_RETURN(int64_t v, IntField(key, value, 0, kIntMax));
    input->top_k = static_cast<int>(v);
  } else if (key == "max_new_tokens") {
    ASSIGN_OR_RETURN(int64_t v, IntField(key, value, 0, kIntMax));
    input->max_new_tokens = static_cast<int>(v);
  } else if (key == "seed") {
    ASSIGN_OR_RETURN(input->seed, IntField(key, value, INT64_MIN, INT64_MAX));
  } else if (key == "step") {
    ASSIGN_OR_RETURN(input->step, IntField(key, value, 1, INT64_MAX));
  } else if (key == "temperature") {
    if (!value.is_number()) return KeyError(key, "a number");
    input->temperature = value.get<double>();
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("predict: unknown key \"", key.substr(0, 64), "\"; ", kBodyShape));
  }
  return absl::OkStatus();
}

// CheckpointPredictor's errors as HTTP statuses: the shared table, plus the codes only a
// prediction returns.
ApiResponse PredictError(const absl::Status& status) {
  ApiResponse response = ErrorResponse(status);
  switch (status.code()) {
    case absl::StatusCode::kResourceExhausted:
      response.status = 429;
      break;
    case absl::StatusCode::kDeadlineExceeded:
      response.status = 504;
      break;
    case absl::StatusCode::kUnimplemented:
      response.status = 501;
      break;
    default:
      break;
  }
  return response;
}

}  // namespace

absl::StatusOr<PredictInput> ParsePredictBody(const std::string& body) {
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return absl::InvalidArgumentError(kBodyShape);
  PredictInput input;
  for (const auto& [key, value] : j.items()) RETURN_IF_ERROR(SetField(key, value, &input));
  return input;
}

ApiResponse PredictApi::Predict(const Principal& caller, const std::string& id,
                                const std::string& body) {
  if (absl::Status access = jobs_->CheckAccess(caller, id); !access.ok()) {
    return PredictError(access);
  }
  if (predictor_ == nullptr) {
    return PredictError(absl::UnimplementedError("this server does not run predictions"));
  }
  absl::StatusOr<PredictInput> input = ParsePredictBody(body);
  if (!input.ok()) return PredictError(input.status());
  absl::StatusOr<JobRecord> job = jobs_->Get(id);
  if (!job.ok()) return PredictError(job.status());
  absl::StatusOr<PredictOutput> output = predictor_->Predict(*job, *input);
  if (!output.ok()) return PredictError(output.status());
  json result = json::parse(output->json, nullptr, /*allow_exceptions=*/false);
  if (result.is_discarded()) {
    return PredictError(absl::InternalError(
        absl::StrCat("lm-train predict printed no JSON document: ", output->json.substr(0, 200))));
  }
  return {200, json{{"job_id", id}, {"step", output->step}, {"result", std::move(result)}}};
}

}  // namespace lmtrain
