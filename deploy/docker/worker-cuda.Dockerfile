# syntax=docker/dockerfile:1
# CUDA worker: lm-worker + lm-train built against the CUDA build of LibTorch (NCCL compiled in
# for multi-worker jobs) on Debian 12, with CUDA from NVIDIA's apt repository.
# Build from the repository root (needs network access to NVIDIA's and PyTorch's downloads):
#   docker build -f deploy/docker/worker-cuda.Dockerfile -t lmtrain/lm-worker-cuda .
#
# LibTorch 1.13.1 is the default because it is the API lmtrain is written and tested against
# (Debian 12's libtorch-dev is 1.13.1, CPU-only); its newest CUDA build is cu117, whose toolkit
# NVIDIA ships in its Debian 11 repository (user-space packages, they install on Debian 12).
# LibTorch >= 2.0 split c10d's ProcessGroup from Backend, so worker/trainer/data_parallel_group.cc
# would need a port first. Other pairs: --build-arg CUDA_PKG_VERSION=... LIBTORCH_URL=...
# CUDA_REPO=... (the zip must be a cxx11-ABI "shared-with-deps" build for that CUDA).
# Not built in the project's CI (no Docker there): see deploy/README.md for what is checked.
ARG DEBIAN_IMAGE=debian:12
ARG CUDA_PKG_VERSION=11-7
ARG CUDA_REPO=https://developer.download.nvidia.com/compute/cuda/repos/debian11/x86_64
ARG LIBTORCH_URL=https://download.pytorch.org/libtorch/cu117/libtorch-cxx11-abi-shared-with-deps-1.13.1%2Bcu117.zip

FROM ${DEBIAN_IMAGE} AS build
ARG CUDA_PKG_VERSION
ARG LIBTORCH_URL
ARG CUDA_REPO
WORKDIR /src
# Debian's libtorch-dev is CPU-only: left out here, the CUDA LibTorch below replaces it.
# setup.sh still installs libgloo-dev, the gloo headers and library the trainer's CMake asks for;
# LibTorch's zip carries its own gloo inside libtorch_cpu. That the two agree is unverified
# (it matters for multi-worker jobs): see deploy/README.md.
COPY scripts/setup.sh scripts/build.sh scripts/
RUN LMTRAIN_SETUP_SKIP="libtorch-dev libgtest-dev libgmock-dev \
      nodejs npm chromium python3-grpcio python3-protobuf" scripts/setup.sh
RUN apt-get update -qq && \
    apt-get install -y -qq --no-install-recommends ca-certificates curl unzip && \
    curl -fsSL -o /tmp/cuda-keyring.deb "${CUDA_REPO}/cuda-keyring_1.1-1_all.deb" && dpkg -i /tmp/cuda-keyring.deb && \
    apt-get update -qq && \
    apt-get install -y -qq --no-install-recommends "cuda-nvcc-${CUDA_PKG_VERSION}" \
      "cuda-libraries-dev-${CUDA_PKG_VERSION}" "cuda-nvtx-${CUDA_PKG_VERSION}" libnccl-dev && \
    rm -rf /var/lib/apt/lists/*
RUN curl -fsSL -o /tmp/libtorch.zip "${LIBTORCH_URL}" && \
    unzip -q /tmp/libtorch.zip -d /opt && rm /tmp/libtorch.zip && \
    test -f /opt/libtorch/share/cmake/Torch/TorchConfig.cmake
ENV PATH=/usr/local/cuda/bin:$PATH
COPY CMakeLists.txt ./
COPY cmake/ cmake/
COPY proto/ proto/
COPY common/ common/
COPY storage/ storage/
COPY server/ server/
COPY worker/ worker/
COPY client/ client/
COPY bench/ bench/
COPY deploy/docker/runtime-packages.sh deploy/docker/
# find_package(Torch) finds /opt/libtorch's TorchConfig.cmake through CMAKE_PREFIX_PATH; with
# the torch_cuda target present the trainer compiles its NCCL process-group path too.
RUN --mount=type=cache,target=/root/.cache/ccache \
    scripts/build.sh -DLMTRAIN_BUILD_TESTS=OFF -DCMAKE_PREFIX_PATH=/opt/libtorch \
      -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc
RUN mkdir -p /out/bin /out/lib && \
    cp build/bin/lm-worker build/bin/lm-train build/bin/lmctl /out/bin/ && \
    cp build/lib/liblmtrain_spm.so /out/lib/ && \
    LD_LIBRARY_PATH=/opt/libtorch/lib RUNTIME_PACKAGES_ALLOW_MISSING="libcuda.so.1" \
      deploy/docker/runtime-packages.sh /out/bin/* /out/lib/* > /out/runtime-packages.txt

FROM ${DEBIAN_IMAGE}
COPY --from=build /tmp/cuda-keyring.deb /tmp/
COPY --from=build /out/runtime-packages.txt /tmp/
# NVIDIA's repository stays configured in case a listed package (e.g. libnccl2) comes from it.
RUN dpkg -i /tmp/cuda-keyring.deb && apt-get update -qq && \
    xargs -a /tmp/runtime-packages.txt apt-get install -y -qq --no-install-recommends && \
    apt-get install -y -qq --no-install-recommends ca-certificates && \
    rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt /tmp/cuda-keyring.deb
RUN groupadd --gid 10001 lmtrain && \
    useradd --uid 10001 --gid 10001 --home-dir /var/lib/lmtrain-worker --create-home lmtrain
# LibTorch's own libraries (libtorch_cuda, cuDNN, cuBLAS, ... bundled in the zip); lm-train's
# RUNPATH points here. libcuda.so.1 comes from the host driver via the NVIDIA container runtime.
COPY --from=build /opt/libtorch/lib/ /opt/libtorch/lib/
COPY --from=build /out/bin/ /opt/lmtrain/bin/
COPY --from=build /out/lib/ /opt/lmtrain/lib/
ENV PATH=/opt/lmtrain/bin:$PATH \
    LD_LIBRARY_PATH=/opt/libtorch/lib \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
USER 10001:10001
WORKDIR /var/lib/lmtrain-worker
EXPOSE 29500-29599
ENTRYPOINT ["lm-worker"]
CMD ["--server", "lm-server:50051", "--work-dir", "/var/lib/lmtrain-worker", "--slots", "1", "--labels", "gpu=true"]
