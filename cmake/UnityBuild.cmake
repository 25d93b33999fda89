# Unity builds: the C++ sources of each target are compiled in batches of up to
# LMTRAIN_UNITY_BATCH_SIZE, one translation unit per batch that #includes them. A build from
# cold then parses LibTorch's, gRPC's and GoogleTest's headers and instantiates their templates
# once per batch instead of once per source (docs/benchmarks.md#test-suite has the figures).
#
# CMake's own UNITY_BUILD includes sources by absolute path, so ccache could never reuse a batch
# in another checkout or build folder. Here a batch file names its sources by their path under
# the project folder ("server/job_service.cc", found through -I<project folder>) and lives at the
# same place under every build folder, so with CCACHE_BASEDIR its compile line and its contents
# are the same in every checkout, and ccache hits.
#
# A source keeps its own translation unit when it has compile properties of its own
# (COMPILE_DEFINITIONS, COMPILE_OPTIONS, COMPILE_FLAGS, INCLUDE_DIRECTORIES,
# SKIP_PRECOMPILE_HEADERS), is generated, lies outside the project folder or inside the build
# folder, or sets SKIP_UNITY_BUILD_INCLUSION. A target with fewer than two such sources is left
# as it is. The sources of one batch share a translation unit: names local to a file (anonymous
# namespaces, static functions, file-scope aliases) must differ between the sources of a target.
#
# -DLMTRAIN_UNITY_BUILD=OFF compiles every source alone (quicker rebuilds while editing one file).
option(LMTRAIN_UNITY_BUILD "Compile each target's C++ sources in batches (unity build)" ON)
set(LMTRAIN_UNITY_BATCH_SIZE 8 CACHE STRING "Sources per unity translation unit")

# _lmtrain_unity_eligible(OUT TARGET SOURCE): OUT is TRUE when SOURCE (absolute) may join a batch.
function(_lmtrain_unity_eligible out target src)
  set(${out} FALSE PARENT_SCOPE)
  if(NOT src MATCHES "\\.(cc|cpp|cxx)$")
    return()
  endif()
  cmake_path(IS_PREFIX PROJECT_SOURCE_DIR "${src}" NORMALIZE in_project)
  cmake_path(IS_PREFIX PROJECT_BINARY_DIR "${src}" NORMALIZE in_build)
  if(NOT in_project OR in_build)
    return()
  endif()
  foreach(prop COMPILE_DEFINITIONS COMPILE_OPTIONS COMPILE_FLAGS INCLUDE_DIRECTORIES
      SKIP_PRECOMPILE_HEADERS SKIP_UNITY_BUILD_INCLUSION GENERATED HEADER_FILE_ONLY)
    get_source_file_property(value "${src}" TARGET_DIRECTORY ${target} ${prop})
    if(value)
      return()
    endif()
  endforeach()
  set(${out} TRUE PARENT_SCOPE)
endfunction()

# lmtrain_unity_build(TARGET): replaces TARGET's eligible sources by batch files that include
# them.
function(lmtrain_unity_build target)
  get_target_property(dir ${target} SOURCE_DIR)
  get_target_property(bin ${target} BINARY_DIR)
  get_target_property(sources ${target} SOURCES)
  set(kept)
  set(batched)
  foreach(src IN LISTS sources)
    if(src MATCHES "\\$<")
      list(APPEND kept "${src}")
      continue()
    endif()
    cmake_path(ABSOLUTE_PATH src BASE_DIRECTORY "${dir}" NORMALIZE OUTPUT_VARIABLE abs)
    _lmtrain_unity_eligible(ok ${target} "${abs}")
    if(ok)
      list(APPEND batched "${abs}")
    else()
      list(APPEND kept "${src}")
    endif()
  endforeach()
  list(LENGTH batched count)
  if(count LESS 2)
    return()
  endif()
  set(batch_files)
  set(index 0)
  set(first 0)
  while(first LESS count)
    list(SUBLIST batched ${first} ${LMTRAIN_UNITY_BATCH_SIZE} batch)
    math(EXPR first "${first} + ${LMTRAIN_UNITY_BATCH_SIZE}")
    set(content "// Unity batch of target ${target} (cmake/UnityBuild.cmake).\n")
    foreach(src IN LISTS batch)
      cmake_path(RELATIVE_PATH src BASE_DIRECTORY "${PROJECT_SOURCE_DIR}" OUTPUT_VARIABLE rel)
      string(APPEND content "#include \"${rel}\"\n")
    endforeach()
    set(file "${bin}/${target}_unity/unity_${index}.cc")
    file(CONFIGURE OUTPUT "${file}" CONTENT "${content}")
    list(APPEND batch_files "${file}")
    math(EXPR index "${index} + 1")
  endwhile()
  set_property(TARGET ${target} PROPERTY SOURCES ${kept} ${batch_files})
  target_include_directories(${target} PRIVATE "${PROJECT_SOURCE_DIR}")
endfunction()

# lmtrain_unity_build_all(DIR): lmtrain_unity_build for every compiled target defined in DIR and
# the folders below it. Call it once, after the last add_subdirectory.
function(lmtrain_unity_build_all dir)
  if(NOT LMTRAIN_UNITY_BUILD)
    return()
  endif()
  if(LMTRAIN_UNITY_BATCH_SIZE LESS 2)
    message(FATAL_ERROR "LMTRAIN_UNITY_BATCH_SIZE=${LMTRAIN_UNITY_BATCH_SIZE}: use 2 or more "
      "(or -DLMTRAIN_UNITY_BUILD=OFF)")
  endif()
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
      lmtrain_unity_build(${target})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    lmtrain_unity_build_all("${subdir}")
  endforeach()
endfunction()
