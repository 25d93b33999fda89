#include "worker/trainer/predict.h"

#include <torch/torch.h>

#include <iostream>
#include <memory>
#include <vector>

#include "common/command_line.h"
#include "common/status_macros.h"
#include "text/tokenizers/tokenizer.h"
#include "worker/models/pretrained_model.h"
#include "worker/trainer/torch_errors.h"

namespace lmtrain {
namespace {

template <typename Model>
absl::StatusOr<std::shared_ptr<Model>> LoadAs(const std::string& dir, const char* what) {
  ASSIGN_OR_RETURN(std::shared_ptr<PretrainedModel> model, LoadPretrained(dir));
  auto typed = std::dynamic_pointer_cast<Model>(model);
  if (typed == nullptr) {
    return absl::InvalidArgumentError("the model in " + dir + " is not " + what +
                                      " (config.json's architectures decides)");
  }
  typed->eval();
  return typed;
}

// [CLS]/<s> text pieces joined by the mask token [SEP]/</s>, and where the masks are.
std::vector<int32_t> MaskedIds(const Tokenizer& tok, const std::string& text,
                               const std::string& mask, std::vector<int64_t>* positions) {
  std::vector<int32_t> ids;
  if (auto cls = tok.ClsId() ? tok.ClsId() : tok.BosId()) ids.push_back(*cls);
  size_t start = 0;
  while (true) {
    const size_t found = text.find(mask, start);
    const std::string piece =
        text.substr(start, found == std::string::npos ? found : found - start);
    for (int32_t id : tok.Encode(piece)) ids.push_back(id);
    if (found == std::string::npos) break;
    positions->push_back(static_cast<int64_t>(ids.size()));
    ids.push_back(*tok.MaskId());
    start = found + mask.size();
  }
  if (auto sep = tok.SepId() ? tok.SepId() : tok.EosId()) ids.push_back(*sep);
  return ids;
}

torch::Tensor Ids(const std::vector<int32_t>& ids) {
  std::vector<int64_t> wide(ids.begin(), ids.end());
  return torch::tensor(wide, torch::kLong).unsqueeze(0);
}

std::vector<int32_t> WithoutSpecial(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  std::vector<int32_t> out;
  for (int32_t id : ids) {
    if (id == tok.ClsId() || id == tok.SepId() || id == tok.BosId() || id == tok.EosId() ||
        id == tok.PadId()) {
      continue;
    }
    out.push_back(id);
  }
  return out;
}

}  // namespace

absl::StatusOr<nlohmann::json> FillMask(const FillMaskOptions& o) {
  if (o.top_k <= 0) return absl::InvalidArgumentError("--top-k must be > 0");
  ASSIGN_OR_RETURN(std::shared_ptr<MaskedLmModel> model,
                   LoadAs<MaskedLmModel>(o.model_dir, "a masked LM"));
  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tok, LoadTokenizer(o.model_dir));
  if (!tok->MaskId()) return absl::InvalidArgumentError("the tokenizer has no mask token");
  const std::string mask = tok->IdToToken(*tok->MaskId());
  std::vector<int64_t> positions;
  const std::vector<int32_t> ids = MaskedIds(*tok, o.text, mask, &positions);
  if (positions.empty()) {
    return absl::InvalidArgumentError("no mask token " + mask + " in the text");
  }
  nlohmann::json all = nlohmann::json::array();
  RETURN_IF_ERROR(CatchTorchErrors(
      [&] {
        torch::NoGradGuard no_grad;
        EncoderInputs inputs;
        inputs.input_ids = Ids(ids);
        const torch::Tensor logits = model->Forward(inputs)[0];
        // As HF's FillMaskPipeline: with several masks the sequence keeps the special tokens,
        // so that the other masks still show.
        const bool single = positions.size() == 1;
        for (int64_t pos : positions) {
          const auto [scores, best] = logits[pos].softmax(-1).topk(o.top_k);
          nlohmann::json list = nlohmann::json::array();
          for (int64_t k = 0; k < best.numel(); ++k) {
            const int32_t id = static_cast<int32_t>(best[k].item<int64_t>());
            std::vector<int32_t> filled = ids;
            filled[pos] = id;
            list.push_back({{"score", scores[k].item<double>()},
                            {"token", id},
                            {"token_str", tok->Decode({id})},
                            {"sequence", tok->Decode(single ? WithoutSpecial(*tok, filled)
                                                            : filled)}});
          }
          all.push_back(list);
        }
        return absl::OkStatus();
      },
      [&] { return std::string("fill-mask"); }));
  return all.size() == 1 ? all[0] : all;
}

absl::StatusOr<nlohmann::json> Generate(const GenerateOptions& o) {
  if (o.prompt.empty()) return absl::InvalidArgumentError("--generate needs a non-empty prompt");
  if (o.max_new_tokens <= 0) return absl::InvalidArgumentError("--max-new-tokens must be > 0");
  if (o.top_k < 0 || o.temperature <= 0) {
    return absl::InvalidArgumentError("--top-k must be >= 0 and --temperature > 0");
  }
  ASSIGN_OR_RETURN(std::shared_ptr<CausalLmModel> model,
                   LoadAs<CausalLmModel>(o.model_dir, "a causal LM"));
  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tok, LoadTokenizer(o.model_dir));
  std::vector<int32_t> ids = tok->Encode(o.prompt);
  const size_t prompt_size = ids.size();
  RETURN_IF_ERROR(CatchTorchErrors(
      [&] {
        torch::NoGradGuard no_grad;
        torch::manual_seed(static_cast<uint64_t>(o.seed));
        for (int i = 0; i < o.max_new_tokens; ++i) {
          const size_t window = std::min<size_t>(ids.size(), model->MaxPositions());
          const std::vector<int32_t> context(ids.end() - window, ids.end());
          const torch::Tensor logits = model->Forward(Ids(context), torch::Tensor())[0][-1];
          int64_t next;
          if (o.top_k == 0) {
            next = logits.argmax().item<int64_t>();
          } else {
            const auto [values, indices] = (logits / o.temperature).topk(o.top_k);
            next =
                indices[torch::multinomial(values.softmax(-1), 1).item<int64_t>()].item<int64_t>();
          }
          if (tok->EosId() && next == *tok->EosId()) break;
          ids.push_back(static_cast<int32_t>(next));
        }
        return absl::OkStatus();
      },
      [&] { return std::string("generate"); }));
  const std::vector<int32_t> continuation(ids.begin() + prompt_size, ids.end());
  return nlohmann::json{{"generated_text", o.prompt + tok->Decode(continuation)}};
}

int PredictMain(const std::vector<std::string>& args) {
  std::string model, fill_mask, generate;
  int64_t top_k = -1, max_new_tokens = 30, seed = 42;
  double temperature = 1.0;
  CommandLine cl("lm-train predict", "fill-mask or text generation with a saved model");
  cl.AddString("model", &model, "an HF model directory with its tokenizer (required)");
  cl.AddString("fill-mask", &fill_mask, "text with the mask token: top-k fillers per mask");
  cl.AddString("generate", &generate, "a prompt to continue (causal LM)");
  cl.AddInt("top-k", &top_k, "fill-mask: candidates (default 5); generate: 0 greedy, k sampling");
  cl.AddInt("max-new-tokens", &max_new_tokens, "generate: tokens to add");
  cl.AddDouble("temperature", &temperature, "generate: sampling temperature");
  cl.AddInt("seed", &seed, "generate: sampling seed");
  absl::StatusOr<std::vector<std::string>> rest = cl.Parse(args);
  if (IsHelpRequest(rest.status())) {
    std::cout << rest.status().message();
    return 0;
  }
  absl::StatusOr<nlohmann::json> result =
      absl::InvalidArgumentError("give --model and one of --fill-mask TEXT or --generate PROMPT");
  if (!rest.ok()) {
    result = rest.status();
  } else if (!model.empty() && !fill_mask.empty() && generate.empty()) {
    result = FillMask({model, fill_mask, top_k < 0 ? 5 : static_cast<int>(top_k)});
  } else if (!model.empty() && !generate.empty() && fill_mask.empty()) {
    result = Generate({model, generate, static_cast<int>(max_new_tokens),
                       top_k < 0 ? 0 : static_cast<int>(top_k), temperature, seed});
  }
  if (!result.ok()) {
    std::cerr << "lm-train predict: error: " << result.status().message() << std::endl;
    return 1;
  }
  std::cout << result->dump(2) << std::endl;
  return 0;
}

}  // namespace lmtrain
