#include "worker/models/safetensors_header.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

namespace lmtrain {
namespace {

constexpr SafetensorsDtype kDtypes[] = {
    {"BOOL", 1, 0}, {"U8", 1, 1},   {"I8", 1, 2},   {"I16", 2, 5},  {"F16", 2, 7},
    {"BF16", 2, 8}, {"I32", 4, 9},  {"F32", 4, 11}, {"F64", 8, 12}, {"I64", 8, 13},
};
constexpr absl::string_view kKnownButUnsupported[] = {"U16", "U32", "U64", "F8_E5M2", "F8_E4M3"};

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

absl::StatusOr<const SafetensorsDtype*> ParseDtype(const nlohmann::json& value) {
  if (!value.is_string()) return absl::InvalidArgumentError("\"dtype\" must be a string");
  const std::string& name = value.get_ref<const std::string&>();
  if (const SafetensorsDtype* info = FindSafetensorsDtype(name)) return info;
  for (absl::string_view unsupported : kKnownButUnsupported) {
    if (unsupported == name) {
      return absl::InvalidArgumentError(
          absl::StrCat("dtype ", name, " has no LibTorch equivalent and is not supported"));
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown dtype '", name, "'"));
}

// Reads a non-negative JSON integer that fits int64 (so it is safe as a size or offset).
absl::StatusOr<uint64_t> ParseSize(const nlohmann::json& value, absl::string_view field) {
  if (!value.is_number_unsigned() || value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", field, "\" must hold non-negative integers (got ",
        value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), ")"));
  }
  return value.get<uint64_t>();
}

absl::Status ParseShapeAndOffsets(const nlohmann::json& spec, SafetensorsEntry& entry) {
  auto shape = spec.find("shape");
  if (shape == spec.end() || !shape->is_array()) {
    return absl::InvalidArgumentError("\"shape\" must be an array");
  }
  for (const nlohmann::json& dim : *shape) {
    ASSIGN_OR_RETURN(uint64_t size, ParseSize(dim, "shape"));
    entry.shape.push_back(static_cast<int64_t>(size));
  }
  auto offsets = spec.find("data_offsets");
  if (offsets == spec.end() || !offsets->is_array() || offsets->size() != 2) {
    return absl::InvalidArgumentError("\"data_offsets\" must be an array [begin, end]");
  }
  ASSIGN_OR_RETURN(entry.begin, ParseSize((*offsets)[0], "data_offsets"));
  ASSIGN_OR_RETURN(entry.end, ParseSize((*offsets)[1], "data_offsets"));
  if (entry.end < entry.begin) {
    return absl::InvalidArgumentError(
        absl::StrCat("data_offsets [", entry.begin, ",", entry.end, "] end before they begin"));
  }
  return absl::OkStatus();
}

// Checks that shape x dtype size is exactly the byte span, without overflowing.
absl::Status CheckByteSize(const SafetensorsEntry& entry) {
  uint64_t bytes = entry.dtype->size;
  bool overflow = false;
  for (int64_t dim : entry.shape) {
    overflow |= __builtin_mul_overflow(bytes, static_cast<uint64_t>(dim), &bytes);
  }
  if (overflow || bytes != entry.end - entry.begin) {
    return absl::InvalidArgumentError(absl::StrCat(
        "data_offsets [", entry.begin, ",", entry.end, "] span ", entry.end - entry.begin,
        " bytes but shape ", ShapeString(entry.shape), " x ", entry.dtype->name, " needs ",
        overflow ? std::string("more than 2^64") : absl::StrCat(bytes)));
  }
  return absl::OkStatus();
}

absl::StatusOr<SafetensorsEntry> ParseEntry(const std::string& name, const nlohmann::json& spec) {
  if (!spec.is_object()) return absl::InvalidArgumentError("entry must be a JSON object");
  SafetensorsEntry entry;
  entry.name = name;
  auto dtype = spec.find("dtype");
  if (dtype == spec.end()) return absl::InvalidArgumentError("entry has no \"dtype\"");
  ASSIGN_OR_RETURN(entry.dtype, ParseDtype(*dtype));
  RETURN_IF_ERROR(ParseShapeAndOffsets(spec, entry));
  RETURN_IF_ERROR(CheckByteSize(entry));
  return entry;
}

absl::Status ParseMetadata(const nlohmann::json& value,
                           std::map<std::string, std::string>& metadata) {
  if (!value.is_object()) {
    return absl::InvalidArgumentError("\"__metadata__\" must be an object of strings");
  }
  for (const auto& [key, item] : value.items()) {
    if (!item.is_string()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "\"__metadata__\".", key, " must be a string (got ",
          item.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), ")"));
    }
    metadata[key] = item.get<std::string>();
  }
  return absl::OkStatus();
}

// The tensors must tile [0, data_size) exactly, as the reference implementation demands.
absl::Status CheckTiling(std::vector<SafetensorsEntry>& entries, uint64_t data_size) {
  std::sort(entries.begin(), entries.end(), [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  uint64_t covered = 0;
  for (const SafetensorsEntry& entry : entries) {
    if (entry.end > data_size) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", entry.name, "': data_offsets [", entry.begin, ",", entry.end,
                       "] run past the end of the data section (", data_size, " bytes)"));
    }
    if (entry.begin != covered) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", entry.name, "': data_offsets [", entry.begin, ",", entry.end, "] ",
          entry.begin < covered ? "overlap the previous tensor" : "leave a gap after byte ",
          entry.begin < covered ? "" : absl::StrCat(covered)));
    }
    covered = entry.end;
  }
  if (covered != data_size) {
    return absl::InvalidArgumentError(absl::StrCat("tensors cover ", covered,
                                                   " bytes but the data section has ", data_size,
                                                   " (trailing bytes)"));
  }
  return absl::OkStatus();
}

}  // namespace

const SafetensorsDtype* FindSafetensorsDtype(absl::string_view name) {
  for (const SafetensorsDtype& info : kDtypes) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

absl::Status CheckSafetensorsHeaderLength(uint64_t header_length, uint64_t file_size) {
  if (file_size < 8) {
    return absl::InvalidArgumentError(absl::StrCat(
        "file is ", file_size, " bytes, too short for a safetensors header (8-byte length)"));
  }
  if (header_length > kMaxSafetensorsHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat("header length ", header_length,
                                                   " exceeds the limit of ",
                                                   kMaxSafetensorsHeaderBytes, " bytes"));
  }
  if (header_length > file_size - 8) {
    return absl::InvalidArgumentError(absl::StrCat("header length ", header_length,
                                                   " runs past the end of the file (", file_size,
                                                   " bytes): truncated?"));
  }
  return absl::OkStatus();
}

absl::StatusOr<SafetensorsLayout> ParseSafetensorsHeader(const std::string& header_text,
                                                         uint64_t file_size) {
  RETURN_IF_ERROR(CheckSafetensorsHeaderLength(header_text.size(), file_size));
  nlohmann::json header = nlohmann::json::parse(header_text, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) {
    return absl::InvalidArgumentError("header is not a valid JSON object");
  }
  SafetensorsLayout layout;
  layout.data_start = 8 + header_text.size();
  for (const auto& [name, spec] : header.items()) {
    if (name == "__metadata__") {
      RETURN_IF_ERROR(ParseMetadata(spec, layout.metadata));
      continue;
    }
    absl::StatusOr<SafetensorsEntry> entry = ParseEntry(name, spec);
    if (!entry.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", name, "': ", entry.status().message()));
    }
    layout.entries.push_back(*std::move(entry));
  }
  RETURN_IF_ERROR(CheckTiling(layout.entries, file_size - layout.data_start));
  return layout;
}

absl::StatusOr<SafetensorsLayout> ParseSafetensorsLayout(std::string_view file) {
  uint64_t header_length = 0;
  if (file.size() >= 8) std::memcpy(&header_length, file.data(), 8);
  RETURN_IF_ERROR(CheckSafetensorsHeaderLength(header_length, file.size()));
  return ParseSafetensorsHeader(std::string(file.substr(8, header_length)), file.size());
}

}  // namespace lmtrain
