#include "common/tensorboard/event_proto.h"

#include <cstring>

namespace lmtrain::tensorboard {
namespace {

// Protobuf wire types.
constexpr int kVarint = 0;
constexpr int kFixed64 = 1;
constexpr int kLengthDelimited = 2;
constexpr int kFixed32 = 5;

void PutVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void PutTag(std::string& out, int field, int wire_type) {
  PutVarint(out, (static_cast<uint64_t>(field) << 3) | wire_type);
}

template <typename Bits>
void PutLittleEndian(std::string& out, Bits bits) {
  for (size_t i = 0; i < sizeof(Bits); ++i)
    out.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
}

void PutDouble(std::string& out, int field, double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  PutTag(out, field, kFixed64);
  PutLittleEndian(out, bits);
}

void PutFloat(std::string& out, int field, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  PutTag(out, field, kFixed32);
  PutLittleEndian(out, bits);
}

// int64 fields are varints of the two's-complement value (10 bytes when negative).
void PutInt64(std::string& out, int field, int64_t value) {
  PutTag(out, field, kVarint);
  PutVarint(out, static_cast<uint64_t>(value));
}

void PutBytes(std::string& out, int field, std::string_view bytes) {
  PutTag(out, field, kLengthDelimited);
  PutVarint(out, bytes.size());
  out.append(bytes);
}

// Event fields.
constexpr int kEventWallTime = 1;
constexpr int kEventStep = 2;
constexpr int kEventFileVersion = 3;
constexpr int kEventSummary = 5;
// Summary fields.
constexpr int kSummaryValue = 1;
// Summary.Value fields.
constexpr int kValueTag = 1;
constexpr int kValueSimpleValue = 2;

}  // namespace

std::string EncodeFileVersionEvent(double wall_time, std::string_view file_version) {
  std::string event;
  PutDouble(event, kEventWallTime, wall_time);
  PutBytes(event, kEventFileVersion, file_version);
  return event;
}

std::string EncodeScalarEvent(double wall_time, int64_t step, std::string_view tag, float value) {
  std::string summary_value;
  PutBytes(summary_value, kValueTag, tag);
  PutFloat(summary_value, kValueSimpleValue, value);
  std::string summary;
  PutBytes(summary, kSummaryValue, summary_value);
  std::string event;
  PutDouble(event, kEventWallTime, wall_time);
  if (step != 0) PutInt64(event, kEventStep, step);  // proto3 leaves default values out.
  PutBytes(event, kEventSummary, summary);
  return event;
}

}  // namespace lmtrain::tensorboard
