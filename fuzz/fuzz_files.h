// Files and multi-part inputs for fuzz targets whose parser reads paths or several files.
//
// Every process gets one private folder (removed at exit) under $TMPDIR when set, else under
// /dev/shm when writable (a memory file system: rewriting a file per input stays cheap), else
// /tmp; FuzzFile writes a file in it, replacing what an earlier input left. A target that needs
// several files takes them from one input split at kFuzzPartSeparator lines, so that seed
// inputs stay readable text.
// Not thread-safe: libFuzzer runs inputs one at a time.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lmtrain {

// A line of its own that separates the parts of a multi-file input.
inline constexpr std::string_view kFuzzPartSeparator = "\n====\n";

// The process's fuzz folder (created on first use); aborts when it cannot be made.
const std::string& FuzzDir();

// Writes `data` to FuzzDir()/`name` (subfolders created as needed) and returns the path.
// Aborts when it cannot be written: a fuzz target must not run on stale files.
std::string FuzzFile(const std::string& name, std::string_view data);

// `data` split at kFuzzPartSeparator into exactly `count` parts: missing parts are empty and
// the last part keeps any further separators.
std::vector<std::string_view> FuzzParts(std::string_view data, size_t count);

}  // namespace lmtrain
