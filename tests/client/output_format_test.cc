#include "client/output_format.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace lmtrain {
namespace {

// Reads YAML back into JSON the way a typical reader types plain scalars; quoted scalars
// (tag "!") stay strings.
nlohmann::json YamlToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& kv : n) out[kv.first.as<std::string>()] = YamlToJson(kv.second);
      return out;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& item : n) out.push_back(YamlToJson(item));
      return out;
    }
    case YAML::NodeType::Scalar: {
      const std::string s = n.as<std::string>();
      if (n.Tag() == "!") return s;
      if (s == "true" || s == "false") return s == "true";
      if (s == "~" || s == "null") return nullptr;
      int64_t i;
      if (YAML::convert<int64_t>::decode(n, i)) return i;
      double d;
      if (YAML::convert<double>::decode(n, d)) return d;
      return s;
    }
    default:
      return nullptr;
  }
}

TEST(OutputFormatTest, ParsesTheThreeNames) {
  EXPECT_EQ(*ParseOutputFormat("text"), OutputFormat::kText);
  EXPECT_EQ(*ParseOutputFormat("json"), OutputFormat::kJson);
  EXPECT_EQ(*ParseOutputFormat("yaml"), OutputFormat::kYaml);
  auto bad = ParseOutputFormat("xml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'xml'"), std::string_view::npos);
}

TEST(OutputFormatTest, YamlReadsBackAsTheSameJson) {
  const nlohmann::json job = {
      {"id", "12"},  // Looks like a number: must stay a string.
      {"name", "tiny"},
      {"state", "QUEUED"},
      {"flag_text", "true"},
      {"empty", ""},
      {"finished_at", nullptr},
      {"priority", 5},
      {"loss", 2.5},
      {"ok", true},
      {"text", "a: b # not a comment"},
      {"metrics", {{"step", 10}, {"eval_metrics", nlohmann::json::object()}}},
      {"attempts", {{{"number", 1}, {"worker_ids", {"1", "2"}}}}},
      {"none", nlohmann::json::array()},
      {"created_at", "2026-11-24T04:50:52.471Z"}};
  const std::string yaml = JsonToYaml(job);
  EXPECT_EQ(YamlToJson(YAML::Load(yaml)), job) << yaml;
  EXPECT_NE(yaml.find("id: \"12\""), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("name: tiny"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("created_at: \"2026-11-24T04:50:52.471Z\""), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("none: []"), std::string::npos) << yaml;
}

TEST(OutputFormatTest, DocumentsAndStreamItems) {
  const nlohmann::json v = {{"a", 1}};
  EXPECT_EQ(RenderDocument(v, OutputFormat::kJson), "{\n  \"a\": 1\n}\n");
  EXPECT_EQ(RenderDocument(v, OutputFormat::kYaml), "a: 1\n");
  EXPECT_EQ(RenderStreamItem(v, OutputFormat::kJson), "{\"a\":1}\n");
  EXPECT_EQ(RenderStreamItem(v, OutputFormat::kYaml), "---\na: 1\n");
  const std::string two =
      RenderStreamItem(v, OutputFormat::kYaml) + RenderStreamItem({{"a", 2}}, OutputFormat::kYaml);
  std::vector<YAML::Node> docs = YAML::LoadAll(two);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[1]["a"].as<int>(), 2);
}

}  // namespace
}  // namespace lmtrain
