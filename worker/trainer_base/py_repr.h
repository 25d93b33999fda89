// Python's text for numbers and dicts, so lm-train prints log lines exactly as HF's Trainer
// does: {'loss': 3.21, 'learning_rate': 0.0009, 'epoch': 0.5}. Torch-free.
// Thread-safe: pure functions over values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lmtrain {

// repr(float) of Python 3: the shortest digits that read back as `value`; fixed notation
// for decimal exponents in [-4, 16), otherwise "1e-05" / "1.5e+16"; "nan", "inf", "-inf".
std::string PyFloatRepr(double value);

// Python's round(value, digits) for digits >= 0 (round half to even on the exact binary
// value, as Python does).
double PyRound(double value, int digits);

// A value of a printed dict: a Python float (from a double, implicitly) or an int.
struct PyNumber {
  PyNumber(double v) : value(v) {}  // NOLINT: a float is the common case.
  static PyNumber Int(int64_t v) {
    PyNumber n(static_cast<double>(v));
    n.integer = v;
    return n;
  }
  double value;
  std::optional<int64_t> integer;  // Set: printed as an int.
};

// repr of a dict of numbers, keys in the given order: {'a': 1.0, 'b': 0.5, 'c': 3}.
std::string PyDictRepr(const std::vector<std::pair<std::string, PyNumber>>& items);

}  // namespace lmtrain
