// Clock: the time seam. Production code takes a Clock* so tests can inject time.
#pragma once

#include <chrono>
#include <cstdint>

namespace lmtrain {

class Clock {
 public:
  virtual ~Clock() = default;
  // Unix time in milliseconds.
  virtual int64_t NowMs() const = 0;
};

// Wall clock. Thread-safe; stateless.
class SystemClock final : public Clock {
 public:
  int64_t NowMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  static SystemClock* Get() {
    static SystemClock clock;
    return &clock;
  }
};

}  // namespace lmtrain
