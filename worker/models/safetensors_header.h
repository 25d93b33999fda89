// The torch-free half of reading a safetensors file (safetensors.h has the format): the 8-byte
// header length, the JSON header, and where each tensor lies in the data section. Every size
// and offset is validated here, before safetensors.cc allocates or reads anything.
// Thread-safe: free functions, no shared state.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace lmtrain {

// Header limit of the reference implementation; larger headers are rejected as hostile.
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

// A dtype the reader supports.
struct SafetensorsDtype {
  absl::string_view name;  // "F32", "BF16", ...
  uint64_t size;           // Bytes per element.
  int rank;                // Position in the safetensors crate's Dtype enum: the writer's sort key.
};

// The supported dtype called `name`, or nullptr.
const SafetensorsDtype* FindSafetensorsDtype(absl::string_view name);

// One tensor's entry: dtype, shape, and its byte span [begin, end) in the data section, with
// end - begin == numel x dtype size.
struct SafetensorsEntry {
  std::string name;
  const SafetensorsDtype* dtype = nullptr;
  std::vector<int64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

struct SafetensorsLayout {
  uint64_t data_start = 0;                     // File offset of the data section: 8 + header.
  std::vector<SafetensorsEntry> entries;       // In data order; they tile the data section.
  std::map<std::string, std::string> metadata;  // "__metadata__".
};

// Checks the header length read from a file's first 8 bytes against the file's size:
// InvalidArgument when the file is shorter than 8 bytes, or the length exceeds
// kMaxSafetensorsHeaderBytes or runs past the end of the file.
absl::Status CheckSafetensorsHeaderLength(uint64_t header_length, uint64_t file_size);

// Parses the header JSON of a file of `file_size` bytes (so the data section is the
// file_size - 8 - header_text.size() bytes after it). InvalidArgument, naming the tensor, for a
// header that is not a JSON object, a non-string metadata value, an entry without a valid
// dtype/shape/data_offsets, a byte span that is not numel x element size, or offsets that do
// not tile the data section exactly (out of range, overlapping, gaps, trailing bytes).
absl::StatusOr<SafetensorsLayout> ParseSafetensorsHeader(const std::string& header_text,
                                                         uint64_t file_size);

// The layout of a whole safetensors file held in memory: CheckSafetensorsHeaderLength, then
// ParseSafetensorsHeader. Errors as those give.
absl::StatusOr<SafetensorsLayout> ParseSafetensorsLayout(std::string_view file);

}  // namespace lmtrain
