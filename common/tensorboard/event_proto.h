// The few tensorflow.Event protos that lm-train writes, encoded by hand in protobuf wire
// format (no protobuf library, no generated code). Torch-free.
//
// Field numbers are those of TensorFlow's tensorflow/core/util/event.proto and
// tensorflow/core/framework/summary.proto (also tensorboard/compat/proto/):
//   Event   { double wall_time = 1; int64 step = 2;
//             oneof what { string file_version = 3; Summary summary = 5; ... } }
//   Summary { repeated Value value = 1; }
//   Summary.Value { string tag = 1; oneof value { float simple_value = 2; ... } }
// A scalar is the classic Summary.Value.simple_value, which TensorBoard still reads as a
// scalar series. The bytes are what protobuf's own serializer gives for the same message
// (fields in number order, a zero step left out as proto3 does).
// (A wall_time of 0, which no real clock gives, is still written.)
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lmtrain::tensorboard {

// The first event of every event file: Event{wall_time, file_version}.
// file_version is "brain.Event:2" for current TensorBoard files.
std::string EncodeFileVersionEvent(double wall_time, std::string_view file_version);

// Event{wall_time, step, summary{value{tag, simple_value}}}.
std::string EncodeScalarEvent(double wall_time, int64_t step, std::string_view tag, float value);

}  // namespace lmtrain::tensorboard
