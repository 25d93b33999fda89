// Reading integers from parsed JSON without undefined behaviour. nlohmann's get<T>() casts a
// floating-point value (5e33, 1.5) to T, which is undefined where it does not fit; these accept
// only JSON integers in T's range. Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

namespace lmtrain {

// `value` as a T when it is a JSON integer in T's range; nullopt otherwise.
template <typename T>
std::optional<T> JsonInteger(const nlohmann::json& value) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  if (!value.is_number_integer()) return std::nullopt;
  if (value.is_number_unsigned()) {
    const uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) return std::nullopt;
    return static_cast<T>(u);
  }
  const int64_t v = value.get<int64_t>();
  if constexpr (std::is_signed_v<T>) {
    if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) return std::nullopt;
  } else {
    if (v < 0) return std::nullopt;
  }
  return static_cast<T>(v);
}

// Member `key` of `object` through JsonInteger; nullopt when it is missing (or `object` is not
// an object).
template <typename T>
std::optional<T> JsonIntegerMember(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  return JsonInteger<T>(*it);
}

// The same, with `fallback` for a missing member (a key older writers left out); nullopt only
// when the member is there but not a JSON integer in T's range.
template <typename T>
std::optional<T> JsonIntegerMemberOr(const nlohmann::json& object, const char* key, T fallback) {
  const auto it = object.find(key);
  if (it == object.end()) return fallback;
  return JsonInteger<T>(*it);
}

}  // namespace lmtrain
