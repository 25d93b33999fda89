// Seeded sampling of a text file's lines, for tokenizer training.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace lmtrain::tokenizers_internal {

// The non-blank lines of `path` (without their "\n" / "\r\n"): all of them in
// file order when there are at most `max_lines`, else a uniform sample of
// `max_lines` (reservoir sampling driven by a 64-bit Mersenne Twister seeded
// with `seed`). A pure function of the file's bytes, `max_lines` (> 0) and
// `seed`, on every platform. NotFound / PermissionDenied naming the file.
absl::StatusOr<std::vector<std::string>> SampleLines(const std::string& path,
                                                     int64_t max_lines,
                                                     uint64_t seed);

}  // namespace lmtrain::tokenizers_internal
