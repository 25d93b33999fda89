// safetensors files: the header length, the JSON header and the tensors' data offsets
// (worker/models/safetensors_header.h, the torch-free half of ReadSafetensors).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "worker/models/safetensors_header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view file(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<lmtrain::SafetensorsLayout> layout = lmtrain::ParseSafetensorsLayout(file);
  if (!layout.ok()) return 0;
  // What ReadSafetensors then reads must lie inside the file.
  for (const lmtrain::SafetensorsEntry& entry : layout->entries) {
    if (entry.end < entry.begin || layout->data_start + entry.end > size) std::abort();
  }
  return 0;
}
