#include "tests/text/tokenizers/protobuf_probe.h"

#include <google/protobuf/descriptor.pb.h>

namespace lmtrain::tokenizer_testing {

std::string SerializeProbeProto(const std::string& name) {
  GOOGLE_PROTOBUF_VERIFY_VERSION;
  google::protobuf::FileDescriptorProto proto;
  proto.set_name(name);
  std::string bytes;
  return proto.SerializeToString(&bytes) ? bytes : "";
}

std::string ParseProbeProtoName(const std::string& bytes) {
  google::protobuf::FileDescriptorProto parsed;
  return parsed.ParseFromString(bytes) ? parsed.name() : "";
}

}  // namespace lmtrain::tokenizer_testing
