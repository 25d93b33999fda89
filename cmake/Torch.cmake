# LibTorch for lm-train, its benchmarks and tests: the C++ half of PyPI's `torch` wheel, installed
# by scripts/setup.sh into the project's Python environment (.venv/). Nothing else may provide it.
#
#   Torch_DIR           the wheel's share/cmake/Torch (default: found under .venv/)
#   LMTRAIN_WITH_CUDA   AUTO (default): link the wheel's CUDA parts (libtorch_cuda, NCCL) when a
#                       CUDA toolkit is found, else the CPU parts only; ON: require CUDA; OFF: CPU
#
# Defines the imported target `torch` and LMTRAIN_TORCH_CUDA (ON when torch_cuda is linked).
# The wheel's CMake config enables the CUDA language and needs a toolkit (nvcc, headers) that
# matches the wheel's CUDA major version; without one, the CPU-only target below links
# libtorch_cpu + libc10 straight from the wheel. Both run the same CPU code.
set(LMTRAIN_WITH_CUDA AUTO CACHE STRING "Link LibTorch's CUDA parts: AUTO, ON or OFF")
set_property(CACHE LMTRAIN_WITH_CUDA PROPERTY STRINGS AUTO ON OFF)

if(NOT Torch_DIR)
  file(GLOB _lmtrain_torch_dirs
    "${PROJECT_SOURCE_DIR}/.venv/lib/python3*/site-packages/torch/share/cmake/Torch")
  list(LENGTH _lmtrain_torch_dirs _lmtrain_torch_count)
  if(_lmtrain_torch_count EQUAL 0)
    message(FATAL_ERROR
      "LibTorch not found: no torch wheel under ${PROJECT_SOURCE_DIR}/.venv. Run scripts/setup.sh "
      "(it installs the pinned torch wheel there), or pass -DTorch_DIR=<site-packages>/torch/"
      "share/cmake/Torch, or -DLMTRAIN_BUILD_TRAINER=OFF to build without lm-train.")
  endif()
  list(GET _lmtrain_torch_dirs 0 _lmtrain_torch_dir)
  set(Torch_DIR "${_lmtrain_torch_dir}" CACHE PATH "The torch wheel's share/cmake/Torch" FORCE)
endif()
get_filename_component(LMTRAIN_TORCH_PREFIX "${Torch_DIR}/../../.." ABSOLUTE)

set(_lmtrain_use_cuda OFF)
if(NOT LMTRAIN_WITH_CUDA STREQUAL "OFF")
  find_program(LMTRAIN_NVCC nvcc HINTS ENV CUDA_HOME ENV CUDA_PATH PATHS /usr/local/cuda/bin)
  if(LMTRAIN_NVCC)
    set(_lmtrain_use_cuda ON)
  elseif(LMTRAIN_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "LMTRAIN_WITH_CUDA=ON but no CUDA toolkit (nvcc) was found")
  else()
    message(STATUS "lmtrain: no CUDA toolkit found; lm-train links LibTorch's CPU parts only")
  endif()
endif()

if(_lmtrain_use_cuda)
  if(NOT CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_COMPILER "${LMTRAIN_NVCC}")
  endif()
  # The config enables CUDA only to find the toolkit's libraries; lmtrain compiles no CUDA code,
  # so the architecture list only quiets its probe. Kineto (the profiler) is inside libtorch_cpu.
  if(NOT TORCH_CUDA_ARCH_LIST)
    set(TORCH_CUDA_ARCH_LIST "9.0")
  endif()
  set(kineto_LIBRARY "${LMTRAIN_TORCH_PREFIX}/lib/libtorch_cpu.so" CACHE FILEPATH
    "Kineto is linked into libtorch_cpu")
  find_package(Torch CONFIG REQUIRED)
  if(NOT TARGET torch_cuda)
    message(FATAL_ERROR "the torch wheel at ${LMTRAIN_TORCH_PREFIX} has no CUDA library")
  endif()
  set(LMTRAIN_TORCH_CUDA ON)
else()
  add_library(torch SHARED IMPORTED GLOBAL)
  set_target_properties(torch PROPERTIES
    IMPORTED_LOCATION "${LMTRAIN_TORCH_PREFIX}/lib/libtorch_cpu.so"
    INTERFACE_INCLUDE_DIRECTORIES
      "${LMTRAIN_TORCH_PREFIX}/include;${LMTRAIN_TORCH_PREFIX}/include/torch/csrc/api/include"
    INTERFACE_LINK_LIBRARIES "${LMTRAIN_TORCH_PREFIX}/lib/libc10.so;Threads::Threads"
    # As the wheel's own torch_cpu target: its c10d headers expect these.
    INTERFACE_COMPILE_DEFINITIONS "USE_DISTRIBUTED;USE_C10D_GLOO;USE_RPC;USE_TENSORPIPE")
  set(LMTRAIN_TORCH_CUDA OFF)
endif()
message(STATUS "lmtrain: LibTorch from ${LMTRAIN_TORCH_PREFIX} (CUDA: ${LMTRAIN_TORCH_CUDA})")
