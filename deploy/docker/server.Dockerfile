# syntax=docker/dockerfile:1
# lm-server: the control plane (gRPC on 50051, HTTP dashboard/health/metrics on 8080), with
# lmctl and lm-train beside it: lm-server links no LibTorch, but it runs `lm-train predict` as
# a child for Predict (`lmctl predict`, POST /api/v1/jobs/ID/predict) and finds it next to its
# own executable (common/trainer_path.h). lm-train is built as in worker-cpu.Dockerfile, on the
# CPU libraries of PyPI's torch wheel. Build from the repository root:
#   docker build -f deploy/docker/server.Dockerfile -t lmtrain/lm-server .
ARG DEBIAN_IMAGE=debian:12

FROM ${DEBIAN_IMAGE} AS build
WORKDIR /src
# Packages first, so source edits do not redo this layer (the torch wheel for lm-train; the
# tests' packages are not installed without --tests).
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
    LMTRAIN_BUILD_TARGETS="lm-server lm-train lmctl" \
    scripts/build.sh -DLMTRAIN_BUILD_TESTS=OFF -DLMTRAIN_WITH_CUDA=OFF
# As in worker-cpu.Dockerfile: lm-train finds the sentencepiece shim at BIN/../lib, and the
# wheel's libraries keep their layout under /out/torch.
RUN mkdir -p /out/bin /out/lib /out/torch/torch/lib /out/torch/nvidia/cu13 && \
    cp build/bin/lm-server build/bin/lm-train build/bin/lmctl /out/bin/ && \
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
    useradd --uid 10001 --gid 10001 --home-dir /var/lib/lmtrain --create-home lmtrain
COPY --from=build /out/torch/ /opt/torch/
COPY --from=build /out/bin/ /opt/lmtrain/bin/
COPY --from=build /out/lib/ /opt/lmtrain/lib/
ENV PATH=/opt/lmtrain/bin:$PATH \
    LD_LIBRARY_PATH=/opt/torch/torch/lib
USER 10001:10001
WORKDIR /var/lib/lmtrain
VOLUME ["/var/lib/lmtrain"]
EXPOSE 50051 8080
ENTRYPOINT ["lm-server"]
CMD ["--listen", "0.0.0.0:50051", "--http-listen", "0.0.0.0:8080", "--data-dir", "/var/lib/lmtrain"]
