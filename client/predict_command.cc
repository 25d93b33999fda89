// lmctl predict: inference on a finished job's checkpoint, run by the server (JobService.Predict,
// which runs lm-train predict there; docs/cli.md).
//   lmctl predict ID (--fill-mask TEXT | --generate PROMPT) [--top-k K] [--step N]
//                 [--max-new-tokens N] [--temperature T] [--seed S] [-o json|yaml]
// Text output: fill-mask, one line per candidate ("score  token  sequence", a "mask N" header
// per mask when the text has several); generate, the generated text. -o json|yaml: {job_id,
// step, result} with result as lm-train predict prints it (HF's pipeline output).
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "client/lmctl_command.h"
#include "client/output_format.h"

namespace lmtrain {
namespace {

absl::StatusOr<v1::PredictRequest> RequestFrom(const CommandContext& c) {
  if (c.fill_mask.empty() == c.generate.empty()) {
    return absl::InvalidArgumentError("predict needs one of --fill-mask TEXT or --generate PROMPT");
  }
  v1::PredictRequest req;
  req.set_job_id(c.args[0]);
  req.set_step(c.step);
  if (!c.fill_mask.empty()) req.set_fill_mask(c.fill_mask);
  if (!c.generate.empty()) req.set_generate(c.generate);
  if (c.top_k >= 0) req.set_top_k(static_cast<int32_t>(c.top_k));
  if (c.max_new_tokens != 0) req.set_max_new_tokens(static_cast<int32_t>(c.max_new_tokens));
  if (c.temperature != 0) req.set_temperature(c.temperature);
  if (c.seed != std::numeric_limits<int64_t>::min()) req.set_seed(c.seed);
  return req;
}

void PrintCandidates(const nlohmann::json& candidates) {
  for (const nlohmann::json& entry : candidates) {
    char score[32];
    std::snprintf(score, sizeof score, "%.4f", entry.value("score", 0.0));
    std::cout << score << "  " << entry.value("token_str", "") << "  "
              << entry.value("sequence", "") << "\n";
  }
}

void PrintText(const nlohmann::json& result) {
  if (result.is_object()) {
    std::cout << result.value("generated_text", result.dump()) << std::endl;
    return;
  }
  if (!result.empty() && result[0].is_array()) {  // Several masks: one list each.
    for (size_t m = 0; m < result.size(); ++m) {
      std::cout << "mask " << m + 1 << "\n";
      PrintCandidates(result[m]);
    }
  } else {
    PrintCandidates(result);
  }
  std::cout << std::flush;
}

int Predict(CommandContext& c) {
  auto req = RequestFrom(c);
  if (!req.ok()) return FailWith(req.status());
  auto resp = c.client->Predict(*req);
  if (!resp.ok()) return FailWith(resp.status());
  const nlohmann::json result = nlohmann::json::parse(resp->result_json(), nullptr, false);
  if (result.is_discarded()) {
    return FailWith(
        absl::InternalError("the server's prediction is not JSON: " + resp->result_json()));
  }
  if (c.output != OutputFormat::kText) {
    std::cout << RenderDocument({{"job_id", c.args[0]}, {"step", resp->step()}, {"result", result}},
                                c.output);
    return 0;
  }
  PrintText(result);
  return 0;
}

}  // namespace

std::vector<Command> PredictCommands() {
  return {
      {"predict", 1, 1,
       "ID (--fill-mask TEXT | --generate PROMPT) [--top-k K] [--step N] [--max-new-tokens N] "
       "[--temperature T] [--seed S]",
       "run the job's latest checkpoint (or step N) on one input, on the server", Predict},
  };
}

}  // namespace lmtrain
