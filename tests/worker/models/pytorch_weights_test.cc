// pytorch_model.bin (single and sharded) as transformers 4.x wrote it, made at test time with
// the .venv's torch + transformers by tests/worker/models/hf/pytorch_model_bin.py from a model this
// code saved as safetensors; and the static pickle check that refuses anything but tensors.
#include "worker/models/pytorch_weights.h"

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_paths.h"
#include "tests/test_python.h"
#include "tests/worker/models/model_test_util.h"
#include "worker/models/internal/pickle_globals.h"
#include "worker/models/pretrained_model.h"

namespace lmtrain {
namespace {

using ::lmtrain::testing::ErrorText;
using ::lmtrain::testing::ScopedTempDir;
using ::lmtrain::testing::TinyEncoderConfig;
using ::lmtrain::testing::TinyGpt2Config;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

// Every HF tensor of `a` equals `b`'s.
void ExpectSameWeights(const PretrainedModel& a, const PretrainedModel& b) {
  NamedTensors left = a.HfStateDict(), right = b.HfStateDict();
  ASSERT_EQ(left.size(), right.size());
  for (size_t i = 0; i < left.size(); ++i) {
    EXPECT_EQ(left[i].first, right[i].first);
    EXPECT_TRUE(torch::equal(left[i].second, right[i].second)) << left[i].first;
  }
}

class PytorchWeightsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!lmtrain::testing::TestPythonHas("transformers")) return;
    dir_ = new ScopedTempDir;
    torch::manual_seed(11);
    gpt2_ = new std::shared_ptr<CausalLmModel>(*CreateCausalLm(TinyGpt2Config()));
    electra_ =
        new std::shared_ptr<DiscriminatorModel>(*CreateDiscriminator(TinyEncoderConfig("electra")));
    output_ = new std::string;
    status_ = Convert({{*gpt2_, "gpt2"}, {*electra_, "electra"}});
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (dir_ == nullptr) GTEST_SKIP() << lmtrain_test_python() << " with transformers is missing";
    ASSERT_EQ(status_, 0) << *output_;
  }

  // Saves each model as safetensors in NAME/src, then runs the script once into each NAME/.
  static int Convert(
      const std::vector<std::pair<std::shared_ptr<PretrainedModel>, std::string>>& models) {
    std::string command =
        std::string(LMTRAIN_SOURCE_DIR) + "/tests/worker/models/hf/pytorch_model_bin.py";
    for (const auto& [model, name] : models) {
      const fs::path src = dir_->path() / name / "src";
      fs::create_directories(src);
      if (!SavePretrained(*model, src.string()).ok()) return 1;
      absl::StrAppend(&command, " ", src.string(), " ", (dir_->path() / name).string());
    }
    return lmtrain::testing::RunTestPython(command, output_);
  }
  static std::string Dir(const std::string& name, const std::string& variant) {
    return (dir_->path() / name / variant).string();
  }

  static inline ScopedTempDir* dir_ = nullptr;
  static inline std::shared_ptr<CausalLmModel>* gpt2_ = nullptr;
  static inline std::shared_ptr<DiscriminatorModel>* electra_ = nullptr;
  static inline std::string* output_ = nullptr;
  static inline int status_ = -1;
};

TEST_F(PytorchWeightsTest, SingleFileLoadsAsItsSafetensorsCopy) {
  LoadReport report;
  auto loaded = LoadCausalLm(Dir("gpt2", "single"), &report);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(report.missing_keys.empty());
  ExpectSameWeights(**gpt2_, **loaded);
  torch::Tensor ids = torch::tensor({{1, 2, 3, 30}}, torch::kInt64);
  (*gpt2_)->eval();
  (*loaded)->eval();
  EXPECT_TRUE(torch::equal((*gpt2_)->Forward(ids, {}), (*loaded)->Forward(ids, {})));

  auto electra = LoadPretrained(Dir("electra", "single"), &report);
  ASSERT_TRUE(electra.ok()) << electra.status();
  EXPECT_TRUE(report.missing_keys.empty());
  ExpectSameWeights(**electra_, **electra);
}

TEST_F(PytorchWeightsTest, ShardedFilesLoadThroughTheirIndex) {
  int shards = 0;
  for (const auto& entry : fs::directory_iterator(Dir("gpt2", "sharded"))) {
    shards += entry.path().filename().string().rfind("pytorch_model-", 0) == 0;
  }
  EXPECT_GE(shards, 2);
  ASSERT_TRUE(fs::exists(Dir("gpt2", "sharded") + "/pytorch_model.bin.index.json"));
  ASSERT_FALSE(fs::exists(Dir("gpt2", "sharded") + "/pytorch_model.bin"));
  auto loaded = LoadCausalLm(Dir("gpt2", "sharded"));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ExpectSameWeights(**gpt2_, **loaded);
  auto electra = LoadPretrained(Dir("electra", "sharded"));
  ASSERT_TRUE(electra.ok()) << electra.status();
  ExpectSameWeights(**electra_, **electra);
}

TEST_F(PytorchWeightsTest, SafetensorsWinsWhenBothArePresent) {
  // HF's order: model.safetensors before pytorch_model.bin. Here they hold different weights.
  const std::string both = Dir("gpt2", "single");
  torch::manual_seed(99);
  auto other = CreateCausalLm(TinyGpt2Config());
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(SavePretrained(**other, both).ok());
  auto loaded = LoadCausalLm(both);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ExpectSameWeights(**other, **loaded);
  fs::remove(both + "/model.safetensors");  // Back to the pickled weights for other tests.
  ExpectSameWeights(**gpt2_, **LoadCausalLm(both));
}

TEST_F(PytorchWeightsTest, PickleThatCallsAFunctionIsRefusedUnread) {
  const std::string file = Dir("gpt2", "evil") + "/pytorch_model.bin";
  auto loaded = LoadCausalLm(Dir("gpt2", "evil"));
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ErrorText(loaded.status()), HasSubstr(file + ": the pickle imports posix.system"));
  EXPECT_FALSE(fs::exists(dir_->path() / "gpt2" / "pwned"));
}

TEST_F(PytorchWeightsTest, NotATorchArchiveNamesTheFile) {
  ScopedTempDir dir;
  lmtrain::testing::WriteFileBytes(dir.File("pytorch_model.bin"), "not a zip archive");
  auto tensors = ReadPytorchWeights(dir.File("pytorch_model.bin"));
  EXPECT_EQ(tensors.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ErrorText(tensors.status()),
              HasSubstr(dir.File("pytorch_model.bin") + ": not a readable torch.save zip"));
  EXPECT_EQ(ReadPytorchWeights(dir.File("absent.bin")).status().code(),
            absl::StatusCode::kNotFound);
}

// The static check on hand-written pickles (no torch involved).
TEST(StateDictPickleTest, AllowsStateDictGlobalsOnly) {
  using internal::CheckStateDictPickle;
  using namespace std::string_literals;  // Pickles hold NUL bytes.
  const std::string ok =
      "\x80\x02"
      "ccollections\nOrderedDict\nq\x00"
      ")Rq\x01"
      "ctorch._utils\n_rebuild_tensor_v2\nctorch\nFloatStorage\n."s;
  EXPECT_TRUE(CheckStateDictPickle(ok, "f.bin").ok()) << CheckStateDictPickle(ok, "f.bin").status();

  auto builtins = CheckStateDictPickle(
      "\x80\x02"
      "cbuiltins\neval\nX\x03\x00\x00\x00"
      "1+1\x85R."s,
      "f.bin");
  EXPECT_THAT(ErrorText(builtins), HasSubstr("f.bin: the pickle imports builtins.eval"));
  EXPECT_THAT(ErrorText(builtins), HasSubstr("(at byte 2)"));
  // Protocol 4 names its globals from the stack: refused, whatever they are.
  auto stack_global = CheckStateDictPickle("\x80\x04\x8c\x02os\x8c\x06system\x93."s, "f.bin");
  EXPECT_THAT(ErrorText(stack_global), HasSubstr("opcode 0x93"));
  EXPECT_THAT(ErrorText(CheckStateDictPickle("\x80\x02X\xff\x00\x00\x00"
                                             "ab"s,
                                             "f.bin")),
              HasSubstr("truncated"));
  EXPECT_THAT(ErrorText(CheckStateDictPickle("\x80\x02}"s, "f.bin")),
              HasSubstr("without the STOP"));
  EXPECT_THAT(ErrorText(CheckStateDictPickle("\x80\x02\xff."s, "f.bin")),
              HasSubstr("unknown opcode 0xff"));
}

// What LibTorch's unpickler cannot take is rewritten in place, same length.
TEST(StateDictPickleTest, RewritesOrderedDictCallsAndBuild) {
  using internal::CheckStateDictPickle;
  using namespace std::string_literals;
  // BUILD (an object's attributes, e.g. a state dict's _metadata) pairs them: TUPLE2.
  auto built = CheckStateDictPickle("\x80\x02}q\x00}b."s, "f.bin");
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(*built, "\x80\x02}q\x00}\x86."s);
  // OrderedDict() (LibTorch's unpickler makes it None) becomes {}, also through the memo.
  auto ordered = CheckStateDictPickle(
      "\x80\x02"
      "ccollections\nOrderedDict\nq\x00)Rq\x01h\x00)R\x86."s,
      "f.bin");
  ASSERT_TRUE(ordered.ok()) << ordered.status();
  EXPECT_EQ(*ordered, "\x80\x02}q\x01}\x86."s);
  // Any other use of the class is refused.
  EXPECT_THAT(ErrorText(CheckStateDictPickle("\x80\x02"
                                             "ccollections\nOrderedDict\n}R."s,
                                             "f.bin")),
              HasSubstr("uses collections.OrderedDict other than as OrderedDict()"));
}

}  // namespace
}  // namespace lmtrain
