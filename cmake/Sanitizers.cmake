# Sanitizer and fuzzer builds (docs/reliability.md#fuzzing-and-sanitizers).
#
#   -DLMTRAIN_SANITIZE=address,undefined   ASan + UBSan for every target (gcc or clang)
#   -DLMTRAIN_SANITIZE=thread              TSan
#   -DLMTRAIN_BUILD_FUZZERS=ON             the libFuzzer targets in fuzz/ (clang only); every
#                                          library is compiled with -fsanitize=fuzzer-no-link so
#                                          that libFuzzer sees coverage from the parsers
#
# Any sanitizer stops at its first report (-fno-sanitize-recover=all), so a test or fuzz run
# fails instead of printing and going on. System libraries (abseil, yaml-cpp, protobuf, gRPC)
# stay uninstrumented: that is fine for ASan and UBSan; under TSan races inside them go unseen.
set(LMTRAIN_SANITIZE "" CACHE STRING "Sanitizers for every target: address,undefined or thread")
option(LMTRAIN_BUILD_FUZZERS "Build the libFuzzer targets in fuzz/ (needs clang)" OFF)

if(LMTRAIN_SANITIZE)
  if(NOT LMTRAIN_SANITIZE MATCHES "^(address,undefined|undefined,address|address|undefined|thread)$")
    message(FATAL_ERROR "LMTRAIN_SANITIZE=${LMTRAIN_SANITIZE}: use address,undefined or thread")
  endif()
  add_compile_options(-fsanitize=${LMTRAIN_SANITIZE} -fno-sanitize-recover=all
    -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=${LMTRAIN_SANITIZE} -fno-sanitize-recover=all)
endif()

# TSan cannot see Debian's uninstrumented absl::Mutex: test executables (lmtrain_add_test) link
# these annotations of it (cmake/tsan/absl_mutex_annotations.cc).
if(LMTRAIN_SANITIZE STREQUAL "thread")
  add_library(lmtrain_tsan_absl_mutex OBJECT
    ${CMAKE_CURRENT_LIST_DIR}/tsan/absl_mutex_annotations.cc)
  target_link_libraries(lmtrain_tsan_absl_mutex PUBLIC ${CMAKE_DL_LIBS})
endif()

if(LMTRAIN_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "LMTRAIN_BUILD_FUZZERS needs clang (libFuzzer): CXX=clang++-14 "
      "(scripts/fuzz.sh configures it)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
