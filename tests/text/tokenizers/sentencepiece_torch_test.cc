// Sentencepiece inside a process that also holds LibTorch and libprotobuf, as
// lm-train does. Debian's libsentencepiece.so.0 carries its own protobuf and
// breaks at load next to libprotobuf; the tokenizers reach it only through the
// dlopen()ed shim (RTLD_DEEPBIND), which this test proves works. (libprotobuf is called from
// protobuf_probe.cc: LibTorch translation units cannot include protobuf's headers.)
#include <torch/torch.h>

#include <memory>

#include "gtest/gtest.h"
#include "tests/text/tokenizers/protobuf_probe.h"
#include "tests/text/tokenizers/tokenizer_test_util.h"
#include "text/tokenizers/tokenizer.h"

namespace lmtrain {
namespace {

TEST(SentencePieceTorchTest, TrainsAndLoadsNextToLibTorchAndLibprotobuf) {
  // Use both libraries first, so that they are loaded and initialized before
  // the shim.
  const std::string bytes = tokenizer_testing::SerializeProbeProto("lmtrain_probe.proto");
  ASSERT_FALSE(bytes.empty());
  ASSERT_EQ(torch::ones({2, 3}).sum().item<float>(), 6.0f);

  tokenizer_testing::ScopedTempDir dir;
  SentencePieceTrainOptions options;
  options.vocab_size = 300;
  options.max_sentences = 500;
  auto trained = TrainSentencePiece(tokenizer_testing::SourcePath("examples/data/austen_train.txt"),
                                    dir.File("spiece.model"), options);
  ASSERT_TRUE(trained.ok()) << trained.status();
  const std::string text =
      "She was the youngest of the two daughters of a most affectionate "
      "father.";
  const std::vector<int32_t> ids = (*trained)->Encode(text);
  EXPECT_EQ((*trained)->Decode(ids), text);

  auto loaded = LoadTokenizer(dir.path());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->Encode(text), ids);

  // The ids feed LibTorch, and protobuf still works after sentencepiece ran.
  const torch::Tensor tensor = torch::tensor(std::vector<int64_t>(ids.begin(), ids.end()));
  EXPECT_EQ(tensor.size(0), static_cast<int64_t>(ids.size()));
  EXPECT_EQ(tokenizer_testing::ParseProbeProtoName(bytes), "lmtrain_probe.proto");
}

}  // namespace
}  // namespace lmtrain
