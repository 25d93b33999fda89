#include "worker/trainer_base/py_repr.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace lmtrain {
namespace {

TEST(PyReprTest, FloatsPrintAsPythonRepr) {
  EXPECT_EQ(PyFloatRepr(3.21), "3.21");
  EXPECT_EQ(PyFloatRepr(0.0009), "0.0009");
  EXPECT_EQ(PyFloatRepr(0.0001), "0.0001");
  EXPECT_EQ(PyFloatRepr(1e-05), "1e-05");
  EXPECT_EQ(PyFloatRepr(2.5e-05), "2.5e-05");
  EXPECT_EQ(PyFloatRepr(0.5), "0.5");
  EXPECT_EQ(PyFloatRepr(1.0), "1.0");
  EXPECT_EQ(PyFloatRepr(100.0), "100.0");
  EXPECT_EQ(PyFloatRepr(0.0), "0.0");
  EXPECT_EQ(PyFloatRepr(-2.0), "-2.0");
  EXPECT_EQ(PyFloatRepr(1e16), "1e+16");
  EXPECT_EQ(PyFloatRepr(123456789012345.6), "123456789012345.6");
  EXPECT_EQ(PyFloatRepr(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(PyFloatRepr(std::nan("")), "nan");
  EXPECT_EQ(PyFloatRepr(-std::numeric_limits<double>::infinity()), "-inf");
}

TEST(PyReprTest, RoundMatchesPython) {
  EXPECT_EQ(PyFloatRepr(PyRound(3.14159265, 4)), "3.1416");
  EXPECT_EQ(PyFloatRepr(PyRound(0.333333, 2)), "0.33");
  EXPECT_EQ(PyFloatRepr(PyRound(2.675, 2)), "2.67");  // 2.675 is 2.67499999... in binary.
  EXPECT_EQ(PyFloatRepr(PyRound(0.125, 2)), "0.12");  // Half to even.
}

TEST(PyReprTest, DictKeepsOrder) {
  EXPECT_EQ(PyDictRepr({{"loss", 3.21}, {"learning_rate", 0.0009}, {"epoch", 0.5}}),
            "{'loss': 3.21, 'learning_rate': 0.0009, 'epoch': 0.5}");
  EXPECT_EQ(PyDictRepr({}), "{}");
  EXPECT_EQ(PyDictRepr({{"train_loss", 2.0}, {"train_mem_cpu_alloc_delta", PyNumber::Int(-4096)}}),
            "{'train_loss': 2.0, 'train_mem_cpu_alloc_delta': -4096}");
}

}  // namespace
}  // namespace lmtrain
