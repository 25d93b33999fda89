# syntax=docker/dockerfile:1
# CUDA worker: lm-worker + lm-train on the CUDA 13.0 build of LibTorch from PyPI's torch wheel
# (the version scripts/requirements.txt pins, with its nvidia-* wheels: cuBLAS, cuDNN, NCCL for
# multi-worker jobs). The build stage adds NVIDIA's CUDA 13.0 compiler and headers, which the
# wheel's CMake config needs to link libtorch_cuda; the runtime stage needs no toolkit.
# Build from the repository root (needs network access to PyPI and NVIDIA's apt repository):
#   docker build -f deploy/docker/worker-cuda.Dockerfile -t lmtrain/lm-worker-cuda .
# Not built in the project's CI (no Docker there): see deploy/README.md for what is checked.
ARG DEBIAN_IMAGE=debian:12
ARG CUDA_PKG_VERSION=13-0
ARG CUDA_REPO=https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64

FROM ${DEBIAN_IMAGE} AS build
ARG CUDA_PKG_VERSION
ARG CUDA_REPO
WORKDIR /src
COPY scripts/setup.sh scripts/build.sh scripts/requirements.txt scripts/
RUN scripts/setup.sh && rm -rf /root/.cache/pip
RUN apt-get update -qq && \
    apt-get install -y -qq --no-install-recommends ca-certificates curl && \
    curl -fsSL -o /tmp/cuda-keyring.deb "${CUDA_REPO}/cuda-keyring_1.1-1_all.deb" && \
    dpkg -i /tmp/cuda-keyring.deb && apt-get update -qq && \
    apt-get install -y -qq --no-install-recommends "cuda-nvcc-${CUDA_PKG_VERSION}" \
      "cuda-libraries-dev-${CUDA_PKG_VERSION}" "cuda-nvtx-${CUDA_PKG_VERSION}" && \
    rm -rf /var/lib/apt/lists/*
ENV PATH=/usr/local/cuda/bin:$PATH
COPY CMakeLists.txt ./
COPY cmake/ cmake/
COPY proto/ proto/
COPY common/ common/
COPY storage/ storage/
COPY artifacts/ artifacts/
COPY text/ text/
COPY server/ server/
COPY worker/ worker/
COPY client/ client/
COPY bench/ bench/
COPY deploy/docker/runtime-packages.sh deploy/docker/
# LMTRAIN_WITH_CUDA=ON: fail rather than fall back to a CPU-only lm-train.
RUN --mount=type=cache,target=/root/.cache/ccache \
    LMTRAIN_BUILD_TARGETS="lm-worker lm-train lmctl" \
    scripts/build.sh -DLMTRAIN_BUILD_TESTS=OFF -DLMTRAIN_WITH_CUDA=ON
# The wheel's libraries keep their layout under /out/torch (torch/lib next to nvidia/, which
# their RPATHs name), so libtorch_cuda finds the wheels' CUDA libraries and NCCL.
RUN mkdir -p /out/bin /out/lib /out/torch && \
    cp build/bin/lm-worker build/bin/lm-train build/bin/lmctl /out/bin/ && \
    cp build/lib/liblmtrain_spm.so /out/lib/ && \
    site=$(echo .venv/lib/python3*/site-packages) && \
    mkdir -p /out/torch/torch && cp -a "$site"/torch/lib /out/torch/torch/ && \
    cp -a "$site"/nvidia /out/torch/ && \
    LD_LIBRARY_PATH=/out/torch/torch/lib RUNTIME_PACKAGES_ALLOW_MISSING="libcuda.so.1" \
      deploy/docker/runtime-packages.sh /out/bin/* /out/lib/* > /out/runtime-packages.txt

FROM ${DEBIAN_IMAGE}
COPY --from=build /out/runtime-packages.txt /tmp/
RUN apt-get update -qq && \
    xargs -a /tmp/runtime-packages.txt apt-get install -y -qq --no-install-recommends && \
    apt-get install -y -qq --no-install-recommends ca-certificates && \
    rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt
RUN groupadd --gid 10001 lmtrain && \
    useradd --uid 10001 --gid 10001 --home-dir /var/lib/lmtrain-worker --create-home lmtrain
# libcuda.so.1 comes from the host driver through the NVIDIA container runtime.
COPY --from=build /out/torch/ /opt/torch/
COPY --from=build /out/bin/ /opt/lmtrain/bin/
COPY --from=build /out/lib/ /opt/lmtrain/lib/
ENV PATH=/opt/lmtrain/bin:$PATH \
    LD_LIBRARY_PATH=/opt/torch/torch/lib \
    NVIDIA_VISIBLE_DEVICES=all \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
USER 10001:10001
WORKDIR /var/lib/lmtrain-worker
EXPOSE 29500-29599
ENTRYPOINT ["lm-worker"]
CMD ["--server", "lm-server:50051", "--work-dir", "/var/lib/lmtrain-worker", "--slots", "1", "--labels", "gpu=true"]
