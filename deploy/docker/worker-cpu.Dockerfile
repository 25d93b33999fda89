# syntax=docker/dockerfile:1
# CPU worker: lm-worker + lm-train + lmctl, lm-train on the LibTorch of PyPI's torch wheel
# (the version scripts/requirements.txt pins; Gloo for multi-worker jobs). No CUDA toolkit in
# the build, so lm-train links the wheel's CPU libraries only (cmake/Torch.cmake).
# Build from the repository root:
#   docker build -f deploy/docker/worker-cpu.Dockerfile -t lmtrain/lm-worker .
ARG DEBIAN_IMAGE=debian:12

FROM ${DEBIAN_IMAGE} AS build
WORKDIR /src
COPY scripts/setup.sh scripts/build.sh scripts/requirements.txt scripts/
RUN scripts/setup.sh && rm -rf /var/lib/apt/lists/* /root/.cache/pip
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
RUN --mount=type=cache,target=/root/.cache/ccache \
    LMTRAIN_BUILD_TARGETS="lm-worker lm-train lmctl" \
    scripts/build.sh -DLMTRAIN_BUILD_TESTS=OFF -DLMTRAIN_WITH_CUDA=OFF
# lm-train finds the sentencepiece shim at BIN/../lib; lm-worker finds lm-train next to itself.
# The wheel's libraries keep their layout under /out/torch (torch/lib next to nvidia/, which
# their RPATHs name): libtorch_cpu loads the CUDA runtime and CUPTI even on CPU.
RUN mkdir -p /out/bin /out/lib /out/torch/torch/lib /out/torch/nvidia/cu13 && \
    cp build/bin/lm-worker build/bin/lm-train build/bin/lmctl /out/bin/ && \
    cp build/lib/liblmtrain_spm.so /out/lib/ && \
    site=$(echo .venv/lib/python3*/site-packages) && \
    cp -a "$site"/torch/lib/libtorch_cpu.so "$site"/torch/lib/libc10.so \
      "$site"/torch/lib/libgomp.so.1 /out/torch/torch/lib/ && \
    cp -a "$site"/nvidia/cu13/lib /out/torch/nvidia/cu13/ && \
    LD_LIBRARY_PATH=/out/torch/torch/lib \
      deploy/docker/runtime-packages.sh /out/bin/* /out/lib/* > /out/runtime-packages.txt

FROM ${DEBIAN_IMAGE}
COPY --from=build /out/runtime-packages.txt /tmp/
RUN apt-get update -qq && \
    xargs -a /tmp/runtime-packages.txt apt-get install -y -qq --no-install-recommends && \
    apt-get install -y -qq --no-install-recommends ca-certificates && \
    rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt
RUN groupadd --gid 10001 lmtrain && \
    useradd --uid 10001 --gid 10001 --home-dir /var/lib/lmtrain-worker --create-home lmtrain
COPY --from=build /out/torch/ /opt/torch/
COPY --from=build /out/bin/ /opt/lmtrain/bin/
COPY --from=build /out/lib/ /opt/lmtrain/lib/
ENV PATH=/opt/lmtrain/bin:$PATH \
    LD_LIBRARY_PATH=/opt/torch/torch/lib
USER 10001:10001
WORKDIR /var/lib/lmtrain-worker
# 29500-29599: c10d rendezvous of multi-worker jobs (--rendezvous-ports).
EXPOSE 29500-29599
ENTRYPOINT ["lm-worker"]
CMD ["--server", "lm-server:50051", "--work-dir", "/var/lib/lmtrain-worker", "--slots", "1"]
