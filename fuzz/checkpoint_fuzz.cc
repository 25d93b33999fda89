// What lm-train reads back from a checkpoint folder on resume: manifest.json, checked against
// the folder's files (worker/trainer_base/checkpoint_manifest.h), and trainer_state.json
// (worker/trainer_base/trainer_state.h). The input is manifest.json, a "====" line, then
// trainer_state.json; the folder also holds one small file a manifest may list.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_files.h"
#include "worker/trainer_base/checkpoint_manifest.h"
#include "worker/trainer_base/trainer_state.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lmtrain;
  const std::vector<std::string_view> parts =
      FuzzParts(std::string_view(reinterpret_cast<const char*>(data), size), 2);
  static const std::string dir = [] {
    FuzzFile("checkpoint-10/model.safetensors", "weights");
    return FuzzDir() + "/checkpoint-10";
  }();
  FuzzFile("checkpoint-10/manifest.json", parts[0]);
  (void)VerifyCheckpoint(dir);
  absl::StatusOr<TrainerState> state =
      TrainerState::ReadFile(FuzzFile("state/trainer_state.json", parts[1]));
  if (state.ok()) (void)state->Serialize();
  return 0;
}
