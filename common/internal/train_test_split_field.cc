#include "common/internal/train_test_split_field.h"

#include <yaml-cpp/yaml.h>

#include <string>
#include <variant>

#include "absl/strings/str_cat.h"

namespace lmtrain::internal {
namespace {

constexpr char kPath[] = "data.train_test_split";

// A plain scalar that YAML reads as an integer ([+-]digits): a Python int, so a row count.
bool IsIntegerScalar(const YamlNode& node) {
  return node.IsScalar() && node.Tag() != "!" && LooksLikeInt(node.Scalar());
}

// train_size / test_size: null, a row count or a fraction.
bool ReadSplitSize(YamlReader& r, const YamlNode& v, const std::string& path, SplitSize& out) {
  if (v.IsNull()) {
    out.reset();
    return true;
  }
  if (IsIntegerScalar(v)) {
    std::optional<int64_t> count = r.ReadInt(v, path, Range::AtLeast(1));
    if (count) out = *count;
    return count.has_value();
  }
  std::optional<double> fraction = r.ReadDouble(v, path);
  if (!fraction) return false;
  if (!(*fraction > 0 && *fraction < 1)) {
    r.ReportAt(path, absl::StrCat(path, " must be a fraction in (0, 1) when it is a float (got ",
                                  v.Scalar(), "; an integer such as 1000 is a row count)"));
    return false;
  }
  out = *fraction;
  return true;
}

void ReadSplitKey(YamlReader& r, const std::string& key, const YamlNode& v,
                  const std::string& path, TrainTestSplitSpec& out) {
  if (key == "train_size") {
    ReadSplitSize(r, v, path, out.train_size);
  } else if (key == "test_size") {
    ReadSplitSize(r, v, path, out.test_size);
  } else if (key == "seed") {
    if (v.IsNull()) {
      out.seed.reset();
    } else if (auto seed = r.ReadInt(v, path, Range::AtLeast(0))) {
      out.seed = *seed;
    }
  } else if (auto shuffle = r.ReadBool(v, path)) {
    out.shuffle = *shuffle;
  }
}

void WriteSplitSize(YamlOut& e, const SplitSize& size) {
  if (!size) {
    e << YAML::Null;
  } else if (std::holds_alternative<int64_t>(*size)) {
    e << static_cast<long long>(std::get<int64_t>(*size));
  } else {
    e << FormatDouble(std::get<double>(*size));
  }
}

double FractionOr(const SplitSize& size, double otherwise) {
  return size && std::holds_alternative<double>(*size) ? std::get<double>(*size) : otherwise;
}

}  // namespace

const std::vector<std::string_view>& TrainTestSplitKeys() {
  static const auto* keys =
      new std::vector<std::string_view>{"train_size", "test_size", "seed", "shuffle"};
  return *keys;
}

Field<DataSpec> TrainTestSplitField() {
  auto read = [](YamlReader& r, const YamlNode& v, const std::string& path, DataSpec& out) {
    out.train_test_split.reset();
    if (v.IsNull()) return;
    TrainTestSplitSpec split;
    const bool mapping = r.VisitMapping(
        v, path, TrainTestSplitKeys(),
        [&](const std::string& key, const YamlNode& value, const std::string& child) {
          ReadSplitKey(r, key, value, child, split);
        });
    if (mapping) out.train_test_split = split;
  };
  auto write = [](YamlOut& e, const DataSpec& s) {
    if (!s.train_test_split) {
      e << YAML::Null;
      return;
    }
    const TrainTestSplitSpec& split = *s.train_test_split;
    e << YAML::BeginMap << YAML::Key << "train_size" << YAML::Value;
    WriteSplitSize(e, split.train_size);
    e << YAML::Key << "test_size" << YAML::Value;
    WriteSplitSize(e, split.test_size);
    e << YAML::Key << "seed" << YAML::Value;
    if (split.seed) {
      e << static_cast<long long>(*split.seed);
    } else {
      e << YAML::Null;
    }
    e << YAML::Key << "shuffle" << YAML::Value << (split.shuffle ? "true" : "false");
    e << YAML::EndMap;
  };
  return {"train_test_split", read, write};
}

void CheckTrainTestSplit(YamlReader& r, const JobSpec& spec) {
  if (!spec.data.train_test_split || r.HasProblem(kPath)) return;
  const TrainTestSplitSpec& split = *spec.data.train_test_split;
  const DataSpec& data = spec.data;
  if (!data.validation_file.empty()) {
    r.ReportAt(kPath, absl::StrCat(kPath, " makes the evaluation set (its test split); remove "
                                          "data.validation_file"));
  }
  const bool text_task = spec.task == "clm" || spec.task == "mlm";
  if (text_task && data.validation_split_percentage != DataSpec().validation_split_percentage &&
      !r.HasProblem("data.validation_split_percentage")) {
    r.ReportAt(kPath, absl::StrCat(kPath, " makes the evaluation set (its test split); remove "
                                          "data.validation_split_percentage"));
  }
  if (data.train_file.empty() && data.data_dir.empty() && !r.HasProblem("data.train_file")) {
    r.ReportAt(kPath, absl::StrCat(kPath, " splits the training set: set data.train_file"));
  }
  const double fractions = FractionOr(split.train_size, 0) + FractionOr(split.test_size, 0);
  if (fractions > 1) {
    r.ReportAt(kPath, absl::StrCat(kPath, ": train_size + test_size = ", FormatDouble(fractions),
                                   " must be at most 1 (fractions of the rows)"));
  }
  if (split.shuffle && !split.seed && spec.training.seed < 0) {
    r.ReportAt(kPath, absl::StrCat(kPath, " shuffles with training.seed (", spec.training.seed,
                                   "), which must be >= 0 for it: set ", kPath, ".seed"));
  }
}

}  // namespace lmtrain::internal
