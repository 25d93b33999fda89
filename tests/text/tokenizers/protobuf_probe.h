// Debian's libprotobuf, used from a translation unit of its own: the torch wheel ships older
// protobuf headers in its include folder, so no LibTorch translation unit may include
// protobuf's headers. These two calls are how sentencepiece_torch_test uses libprotobuf.
#pragma once

#include <string>

namespace lmtrain::tokenizer_testing {

// Serialises a FileDescriptorProto named `name`; "" when serialising fails. Runs
// GOOGLE_PROTOBUF_VERIFY_VERSION first.
std::string SerializeProbeProto(const std::string& name);

// The name field of a serialised FileDescriptorProto; "" when `bytes` does not parse.
std::string ParseProbeProtoName(const std::string& bytes);

}  // namespace lmtrain::tokenizer_testing
