#include "worker/trainer_base/py_repr.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace lmtrain {
namespace {

struct Decimal {
  std::string digits;  // Significant digits, no sign, no point.
  int exponent = 0;    // value = d.ddd × 10^exponent
};

// The shortest %e rendering of |value| that reads back exactly.
Decimal ShortestDecimal(double value) {
  char buf[64];
  for (int precision = 0; precision < 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*e", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  const std::string text(buf);  // "d.ddde±XX"
  const size_t e = text.find('e');
  Decimal d;
  for (size_t i = 0; i < e; ++i) {
    if (text[i] != '.') d.digits.push_back(text[i]);
  }
  d.exponent = std::atoi(text.c_str() + e + 1);
  return d;
}

std::string Fixed(const Decimal& d) {
  if (d.exponent < 0) return "0." + std::string(-d.exponent - 1, '0') + d.digits;
  std::string digits = d.digits;
  const size_t int_len = static_cast<size_t>(d.exponent) + 1;
  if (digits.size() < int_len) digits.append(int_len - digits.size(), '0');
  const std::string frac = digits.substr(int_len);
  return digits.substr(0, int_len) + "." + (frac.empty() ? "0" : frac);
}

std::string Scientific(const Decimal& d) {
  std::string out = d.digits.substr(0, 1);
  if (d.digits.size() > 1) out += "." + d.digits.substr(1);
  char exp[16];
  std::snprintf(exp, sizeof(exp), "e%c%02d", d.exponent < 0 ? '-' : '+', std::abs(d.exponent));
  return out + exp;
}

}  // namespace

std::string PyFloatRepr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  const std::string sign = std::signbit(value) ? "-" : "";
  const Decimal d = ShortestDecimal(std::fabs(value));
  const bool fixed = d.exponent >= -4 && d.exponent < 16;
  return sign + (fixed ? Fixed(d) : Scientific(d));
}

double PyRound(double value, int digits) {
  if (!std::isfinite(value) || std::fabs(value) >= 1e17) return value;
  char buf[512];  // glibc prints the exact binary value, rounded half-even.
  std::snprintf(buf, sizeof(buf), "%.*f", digits, value);
  return std::strtod(buf, nullptr);
}

std::string PyDictRepr(const std::vector<std::pair<std::string, PyNumber>>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    const PyNumber& n = items[i].second;
    out += "'" + items[i].first +
           "': " + (n.integer ? std::to_string(*n.integer) : PyFloatRepr(n.value));
  }
  return out + "}";
}

}  // namespace lmtrain
