// YamlOut: the YAML writer behind JobSpecToYaml. It takes the part of YAML::Emitter's
// operator<< surface that the job file's field writers use (block mappings, flow sequences,
// strings, integers, Null, the DoubleQuoted and Flow manipulators) and produces the same text
// as YAML::Emitter, byte for byte, much faster: a document whose every string is a simple word
// (letters, digits and _ . / + -, not starting with - or .; not a null word; "" allowed) and
// whose shapes are block mappings and flow sequences of scalars is written directly; any other
// document is replayed through YAML::Emitter. yaml-cpp's emitter checks every scalar against
// a chain of regular expressions, which cost a third of a submit's CPU in lm-server.
//
// Usage: out << YAML::BeginMap << YAML::Key << "k" << YAML::Value << 3 << YAML::EndMap;
// then str(). Not thread-safe; one object per document.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace lmtrain::internal {

class YamlOut {
 public:
  YamlOut() { events_.reserve(256); }  // A normalised job file is about 200 events.

  // YAML::Key, Value, BeginMap, EndMap, BeginSeq, EndSeq, Flow, DoubleQuoted.
  YamlOut& operator<<(YAML::EMITTER_MANIP manip);
  YamlOut& operator<<(const std::string& text);
  YamlOut& operator<<(const char* text) { return *this << std::string(text); }
  YamlOut& operator<<(YAML::_Null);
  template <typename N,
            typename = std::enable_if_t<std::is_integral_v<N> && !std::is_same_v<N, bool>>>
  YamlOut& operator<<(N number) {
    Event e{std::is_signed_v<N> ? Kind::kSigned : Kind::kUnsigned};
    if constexpr (std::is_signed_v<N>) {
      e.signed_value = number;
    } else {
      e.unsigned_value = number;
    }
    events_.push_back(std::move(e));
    return *this;
  }

  // The document: what YAML::Emitter::c_str() gives for the same calls.
  std::string str() const;
  // The document through YAML::Emitter, always (the reference str() matches).
  std::string ViaYamlCpp() const;

 private:
  enum class Kind { kManip, kString, kSigned, kUnsigned, kNull };
  struct Event {
    Kind kind;
    YAML::EMITTER_MANIP manip = YAML::Auto;
    std::string text;
    long long signed_value = 0;
    unsigned long long unsigned_value = 0;
  };
  class Renderer;  // yaml_out.cc

  std::vector<Event> events_;
};

}  // namespace lmtrain::internal
