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
