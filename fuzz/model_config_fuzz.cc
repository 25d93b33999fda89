// A model's config.json: GPT-2 and BERT-family configs (worker/models), and `lmctl validate`'s
// reading of it (block size against n_positions, the size and time estimate).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "client/job_validate.h"
#include "fuzz/fuzz_files.h"
#include "worker/models/encoder_config.h"
#include "worker/models/gpt2_config.h"

namespace {

constexpr std::string_view kJob = R"(name: fuzz
task: clm
model:
  name_or_path: model
data:
  train_file: train.txt
  block_size: 8
)";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lmtrain;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_discarded()) {
    (void)Gpt2Config::FromJson(json);
    (void)EncoderConfig::FromJson(json);
  }
  static const std::string job = [] {
    FuzzFile("train.txt", "hello world\n");
    return FuzzFile("job.yaml", kJob);
  }();
  FuzzFile("model/config.json", text);
  (void)ValidateJobFile(job);
  return 0;
}
