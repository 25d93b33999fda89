// Python's text for numbers and dicts, so lm-train prints log lines exactly as HF's Trainer
// does: {'loss': 3.21, 'learning_rate': 0.0009, 'epoch': 0.5}. Torch-free.
// Thread-safe: pure functions over values.
#pragma once

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

// repr of a dict of floats, keys in the given order: {'a': 1.0, 'b': 0.5}.
std::string PyDictRepr(const std::vector<std::pair<std::string, double>>& items);

}  // namespace lmtrain
