// Data tables as the glue and classification tasks read them (text/datasets/table.h): CSV,
// TSV, JSON and JSON Lines, with and without a header row; and the GLUE layouts on top
// (text/datasets/glue_reader.h). The first byte picks the format, task and split.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_files.h"
#include "text/datasets/glue_reader.h"
#include "text/datasets/glue_task.h"
#include "text/datasets/table.h"

namespace {

constexpr lmtrain::TableFormat kFormats[] = {lmtrain::TableFormat::kCsv,
                                             lmtrain::TableFormat::kTsv,
                                             lmtrain::TableFormat::kJson,
                                             lmtrain::TableFormat::kJsonLines};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lmtrain;
  if (size == 0) return 0;
  const uint8_t choice = data[0];
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  TableReadOptions options;
  options.format = kFormats[choice % 4];
  options.has_header = (choice & 4) == 0;
  (void)ParseTable(text, "table", options);

  const std::vector<GlueTask>& tasks = AllGlueTasks();
  const GlueTask task = tasks[(choice >> 3) % tasks.size()];
  const GlueSplit split = (choice & 0x80) ? GlueSplit::kTest : GlueSplit::kTrain;
  (void)ReadGlueFile(FuzzFile("glue.tsv", text), task, split);
  return 0;
}
