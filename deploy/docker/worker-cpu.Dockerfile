# syntax=docker/dockerfile:1
# CPU worker: lm-worker + lm-train (Debian 12's LibTorch, Gloo for multi-worker jobs) + lmctl.
# Build from the repository root:
#   docker build -f deploy/docker/worker-cpu.Dockerfile -t lmtrain/lm-worker .
ARG DEBIAN_IMAGE=debian:12

FROM ${DEBIAN_IMAGE} AS build
WORKDIR /src
COPY scripts/setup.sh scripts/build.sh scripts/
RUN LMTRAIN_SETUP_SKIP="libgtest-dev libgmock-dev \
      nodejs npm chromium python3-grpcio python3-protobuf" \
    scripts/setup.sh && rm -rf /var/lib/apt/lists/*
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
RUN --mount=type=cache,target=/root/.cache/ccache \
    scripts/build.sh -DLMTRAIN_BUILD_TESTS=OFF
# lm-train finds the sentencepiece shim at BIN/../lib; lm-worker finds lm-train next to itself.
RUN mkdir -p /out/bin /out/lib && \
    cp build/bin/lm-worker build/bin/lm-train build/bin/lmctl /out/bin/ && \
    cp build/lib/liblmtrain_spm.so /out/lib/ && \
    deploy/docker/runtime-packages.sh /out/bin/* /out/lib/* > /out/runtime-packages.txt

FROM ${DEBIAN_IMAGE}
COPY --from=build /out/runtime-packages.txt /tmp/
RUN apt-get update -qq && \
    xargs -a /tmp/runtime-packages.txt apt-get install -y -qq --no-install-recommends && \
    apt-get install -y -qq --no-install-recommends ca-certificates && \
    rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt
RUN groupadd --gid 10001 lmtrain && \
    useradd --uid 10001 --gid 10001 --home-dir /var/lib/lmtrain-worker --create-home lmtrain
COPY --from=build /out/bin/ /opt/lmtrain/bin/
COPY --from=build /out/lib/ /opt/lmtrain/lib/
ENV PATH=/opt/lmtrain/bin:$PATH
USER 10001:10001
WORKDIR /var/lib/lmtrain-worker
# 29500-29599: c10d rendezvous of multi-worker jobs (--rendezvous-ports).
EXPOSE 29500-29599
ENTRYPOINT ["lm-worker"]
CMD ["--server", "lm-server:50051", "--work-dir", "/var/lib/lmtrain-worker", "--slots", "1"]
