// artifact:sha256: references: parsing, formatting, and how the job file parser treats them.
#include "common/artifact_ref.h"

#include <gtest/gtest.h>

#include <string>

namespace lmtrain {
namespace {

const std::string kHex(64, 'a');

TEST(ArtifactRef, ParsesHashAndPathInsideAFolder) {
  auto plain = ParseArtifactRef("artifact:sha256:" + kHex);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->sha256, kHex);
  EXPECT_EQ(plain->subpath, "");
  auto inner = ParseArtifactRef("artifact:sha256:" + kHex + "/tok/vocab.json");
  ASSERT_TRUE(inner.ok());
  EXPECT_EQ(inner->subpath, "tok/vocab.json");
  EXPECT_EQ(FormatArtifactRef(*inner), "artifact:sha256:" + kHex + "/tok/vocab.json");
}

TEST(ArtifactRef, RejectsBadHashesSchemesAndEscapingPaths) {
  for (const std::string& bad :
       {std::string("artifact:md5:") + kHex, "artifact:sha256:" + kHex.substr(1),
        "artifact:sha256:" + std::string(64, 'A'), "artifact:sha256:" + kHex + "/../x",
        "artifact:sha256:" + kHex + "/a//b", "artifact:sha256:" + kHex + "/"}) {
    auto ref = ParseArtifactRef(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(ref.status())) << bad;
    EXPECT_NE(ref.status().message().find(bad), std::string::npos) << ref.status();
  }
  EXPECT_TRUE(IsArtifactRef("artifact:whatever"));
  EXPECT_FALSE(IsArtifactRef("/data/artifact:x"));
}

TEST(ArtifactRef, JobFileKeepsReferencesAndChecksTheirForm) {
  const std::string head =
      "name: t\ntask: clm\nmodel:\n  config: {model_type: gpt2, n_layer: 1, n_head: 2, "
      "n_embd: 8, n_positions: 32}\ntokenizer:\n  train: {type: bpe, vocab_size: 50}\n";
  ParseOptions options;
  options.base_dir = "/nonexistent";  // check_files: a reference is not a local path.
  auto spec = ParseJobSpec(head + "data:\n  train_file: artifact:sha256:" + kHex + "\n", options);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->data.train_file, "artifact:sha256:" + kHex);
  auto again = ParseJobSpec(JobSpecToYaml(*spec), options);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->data.train_file, spec->data.train_file);

  auto bad = ParseJobSpec(head + "data:\n  train_file: artifact:sha256:123\n", options);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("job.yaml:8: data.train_file: bad artifact reference"),
            std::string::npos)
      << bad.status();
}

TEST(ArtifactRef, SpecPathsListsEveryLocalPathField) {
  JobSpec spec;
  std::vector<std::string> keys;
  for (const SpecPath& p : SpecPaths(spec)) keys.push_back(p.key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"model.name_or_path", "tokenizer.path", "data.train_file",
                                      "data.validation_file", "data.test_file", "data.data_dir"}));
  *SpecPaths(spec)[2].value = "x";
  EXPECT_EQ(spec.data.train_file, "x");
}

}  // namespace
}  // namespace lmtrain
