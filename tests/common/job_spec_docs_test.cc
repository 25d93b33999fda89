// docs/tasks.md's "Every job-file key" tables against the parser's own field tables
// (common/internal/job_spec_fields.h): every key the parser accepts has a row, as
// "| `section.key` |", and every row names a key the parser accepts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "common/internal/job_spec_fields.h"
#include "tests/test_paths.h"

namespace lmtrain {
namespace {

// The part of docs/tasks.md from the key reference's heading on (empty when it is missing).
std::string KeyReference() {
  std::ifstream in(std::string(LMTRAIN_SOURCE_DIR) + "/docs/tasks.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const size_t start = doc.find("\n## Every job-file key\n");
  return start == std::string::npos ? "" : doc.substr(start);
}

template <typename S>
void AddKeys(const std::string& prefix, const internal::FieldTable<S>& table,
             std::set<std::string>* keys) {
  for (const internal::Field<S>& field : table) keys->insert(prefix + std::string(field.key));
}

// Every dotted key path the parser accepts: the top level, model.*, tokenizer.*,
// tokenizer.train.*, data.*, training.*, resources.*.
std::set<std::string> AcceptedKeys() {
  std::set<std::string> keys;
  AddKeys("", internal::TopLevelFields(), &keys);
  for (std::string_view key : internal::ModelKeys()) keys.insert("model." + std::string(key));
  for (std::string_view key : internal::TokenizerKeys()) {
    keys.insert("tokenizer." + std::string(key));
  }
  AddKeys("tokenizer.train.", internal::TokenizerTrainFields(), &keys);
  AddKeys("data.", internal::DataFields(), &keys);
  AddKeys("training.", internal::TrainingFields(), &keys);
  AddKeys("resources.", internal::ResourcesFields(), &keys);
  return keys;
}

TEST(JobSpecDocs, EveryAcceptedKeyHasARowInTasksMd) {
  const std::string doc = KeyReference();
  ASSERT_FALSE(doc.empty()) << "docs/tasks.md has no \"## Every job-file key\" section";
  const std::set<std::string> keys = AcceptedKeys();
  EXPECT_GT(keys.size(), 80u);  // The tables were read.
  for (const std::string& key : keys) {
    EXPECT_NE(doc.find("\n| `" + key + "` |"), std::string::npos)
        << "docs/tasks.md: no row for the job-file key " << key;
  }
}

TEST(JobSpecDocs, EveryRowInTasksMdIsAnAcceptedKey) {
  const std::string doc = KeyReference();
  const std::set<std::string> keys = AcceptedKeys();
  const std::regex row(R"(\n\| `([a-z0-9_.]+)` \|)");
  int rows = 0;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), row); it != std::sregex_iterator();
       ++it) {
    ++rows;
    EXPECT_TRUE(keys.count((*it)[1].str())) << "docs/tasks.md documents " << (*it)[1].str()
                                            << ", which the job-file parser does not accept";
  }
  EXPECT_EQ(rows, static_cast<int>(keys.size()));
}

}  // namespace
}  // namespace lmtrain
