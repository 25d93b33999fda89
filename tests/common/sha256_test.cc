#include "common/sha256.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace lmtrain {
namespace {

std::string HexOf(std::string_view bytes) {
  absl::StatusOr<Sha256Digest> digest = Sha256Of(bytes);
  EXPECT_TRUE(digest.ok()) << digest.status();
  return DigestHex(*digest);
}

TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(HexOf(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(HexOf("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Test, IncrementalEqualsOneShot) {
  const std::string text(100000, 'x');
  Sha256 hash;
  for (size_t i = 0; i < text.size(); i += 777) hash.Update(text.substr(i, 777));
  absl::StatusOr<Sha256Digest> digest = hash.Finish();
  ASSERT_TRUE(digest.ok());
  EXPECT_EQ(DigestHex(*digest), HexOf(text));
  EXPECT_TRUE(absl::IsFailedPrecondition(hash.Finish().status()));
}

TEST(Sha256Test, FileDigestAndMissingFile) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "sha256_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "a.txt").string();
  std::ofstream(path, std::ios::binary) << "abc";
  absl::StatusOr<Sha256Digest> digest = Sha256OfFile(path);
  ASSERT_TRUE(digest.ok()) << digest.status();
  EXPECT_EQ(DigestHex(*digest), HexOf("abc"));
  absl::StatusOr<Sha256Digest> missing = Sha256OfFile((dir / "missing").string());
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_NE(missing.status().message().find("missing"), std::string_view::npos);
}

}  // namespace
}  // namespace lmtrain
