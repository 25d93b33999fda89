// The source and build folders of the tree the tests were built in, for tests that read the
// repository's data or run its programs. The values come from one translation unit that CMake
// generates (cmake/Testing.cmake), so no test source's compile line names a folder and ccache
// reuses the test objects across checkouts.
#pragma once

// Absolute paths, without a trailing slash.
const char* lmtrain_test_source_dir();
const char* lmtrain_test_binary_dir();

#define LMTRAIN_SOURCE_DIR (lmtrain_test_source_dir())
#define LMTRAIN_BINARY_DIR (lmtrain_test_binary_dir())
