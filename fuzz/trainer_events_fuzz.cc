// The trainer event stream lm-worker reads from lm-train's --events-fd: one JSON line per
// event (common/trainer_events.h). A decoded event must encode and decode again.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/trainer_events.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lmtrain;
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<TrainerEvent> event = DecodeTrainerEvent(line);
  if (!event.ok()) return 0;
  const std::string encoded = EncodeTrainerEvent(*event);
  absl::StatusOr<TrainerEvent> again = DecodeTrainerEvent(encoded);
  if (!again.ok()) {
    std::fprintf(stderr, "re-encoded event does not decode: %s\n%s\n",
                 again.status().ToString().c_str(), encoded.c_str());
    std::abort();
  }
  return 0;
}
