// SQuAD files for the qa task (text/qa/squad_reader.h): nested JSON and flattened JSON
// Lines, SQuAD v1.1 and v2.0 rules. The first byte picks the format and version.
#include <cstdint>
#include <string_view>

#include "text/qa/squad_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lmtrain;
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  SquadReadOptions options;
  options.version_2_with_negative = data[0] & 1;
  if (data[0] & 2) {
    (void)ParseSquadJsonLines(text, "squad.jsonl", options);
  } else {
    (void)ParseSquadJson(text, "squad.json", options);
  }
  return 0;
}
