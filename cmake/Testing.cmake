# lmtrain_add_test(NAME SOURCES a.cc b.cc LIBS lib... [LABELS l...] [TIMEOUT s])
# One GoogleTest executable registered with ctest (one ctest entry per test case).
include(GoogleTest)
function(lmtrain_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    LMTRAIN_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    LMTRAIN_BINARY_DIR="${CMAKE_BINARY_DIR}")
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  # A list value must keep its ';' escaped through gtest_discover_tests' generated script, or
  # only the first label applies and the following words are read as property names.
  string(REPLACE ";" "\\;" labels "${T_LABELS}")
  gtest_discover_tests(${name}
    PROPERTIES LABELS "${labels}" TIMEOUT ${T_TIMEOUT}
    DISCOVERY_TIMEOUT 60)
endfunction()
