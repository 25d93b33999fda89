include(GoogleTest)

# Test sources name the source and build folders through tests/test_paths.h, and the project's
# Python through tests/test_python.h. The values live in one generated translation unit,
# lmtrain_test_paths, so that the test sources' compile lines are the same in every checkout and
# ccache (CCACHE_BASEDIR) reuses their objects across clones.
file(CONFIGURE OUTPUT "${CMAKE_BINARY_DIR}/lmtrain_test_paths.cc" CONTENT [=[
#include "tests/test_paths.h"
const char* lmtrain_test_source_dir() { return "@PROJECT_SOURCE_DIR@"; }
const char* lmtrain_test_binary_dir() { return "@CMAKE_BINARY_DIR@"; }
const char* lmtrain_test_python() { return "@LMTRAIN_PYTHON@"; }
]=] @ONLY)
add_library(lmtrain_test_paths STATIC "${CMAKE_BINARY_DIR}/lmtrain_test_paths.cc")
target_include_directories(lmtrain_test_paths PUBLIC "${PROJECT_SOURCE_DIR}")

# lmtrain_use_test_paths(TARGET): TARGET's sources may include tests/test_paths.h.
function(lmtrain_use_test_paths target)
  target_link_libraries(${target} PRIVATE lmtrain_test_paths)
endfunction()

# lmtrain_reuse_torch_pch(TARGET): TARGET's sources start from lmtrain_models' precompiled
# <torch/torch.h> instead of parsing LibTorch's headers again (~6 s per translation unit). GCC
# only accepts a PCH built with the same -fPIC/-fPIE setting, so TARGET compiles as the library
# does (-fPIC); -Winvalid-pch says so if the PCH is ever skipped. Needs LMTRAIN_BUILD_TRAINER.
function(lmtrain_reuse_torch_pch target)
  target_precompile_headers(${target} REUSE_FROM lmtrain_models)
  target_compile_options(${target} PRIVATE -fPIC -Winvalid-pch)
endfunction()

# lmtrain_add_test(NAME SOURCES a.cc b.cc LIBS lib... [LABELS l...] [TIMEOUT s])
# One GoogleTest executable registered with ctest (one ctest entry per test case).
function(lmtrain_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  if(TARGET lmtrain_tsan_absl_mutex)
    target_link_libraries(${name} PRIVATE lmtrain_tsan_absl_mutex)
  endif()
  lmtrain_use_test_paths(${name})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  # Labels are set by a small include file that ctest reads after the discovered tests: passed
  # through gtest_discover_tests' PROPERTIES, a list of labels loses all but the first (its
  # generated script splits the list into separate words).
  gtest_discover_tests(${name}
    PROPERTIES TIMEOUT ${T_TIMEOUT}
    DISCOVERY_TIMEOUT 60
    TEST_LIST ${name}_TESTS)
  if(T_LABELS)
    set(labels_file "${CMAKE_CURRENT_BINARY_DIR}/${name}_labels.cmake")
    file(WRITE "${labels_file}"
      "if(${name}_TESTS)\n"
      "  set_tests_properties(\${${name}_TESTS} PROPERTIES LABELS \"${T_LABELS}\")\n"
      "endif()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${labels_file}")
  endif()
endfunction()

# lmtrain_test_uses_postgres(NAME): NAME's tests share the PostgreSQL test server that the
# ctest fixture `postgres` runs (tests/storage/postgres_test_server.h); it is passed to them in
# LMTRAIN_TEST_POSTGRES_DIR.
set(LMTRAIN_POSTGRES_TEST_DIR "${CMAKE_BINARY_DIR}/postgres-test")
function(lmtrain_test_uses_postgres name)
  target_link_libraries(${name} PRIVATE lmtrain_postgres_test_server)
  set(props_file "${CMAKE_CURRENT_BINARY_DIR}/${name}_postgres.cmake")
  file(WRITE "${props_file}"
    "if(${name}_TESTS)\n"
    "  set_tests_properties(\${${name}_TESTS} PROPERTIES FIXTURES_REQUIRED postgres\n"
    "    ENVIRONMENT \"LMTRAIN_TEST_POSTGRES_DIR=${LMTRAIN_POSTGRES_TEST_DIR}\")\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${props_file}")
endfunction()
