# syntax=docker/dockerfile:1
# lm-server: the control plane (gRPC on 50051, HTTP dashboard/health/metrics on 8080).
# No LibTorch. Build from the repository root:
#   docker build -f deploy/docker/server.Dockerfile -t lmtrain/lm-server .
ARG DEBIAN_IMAGE=debian:12

FROM ${DEBIAN_IMAGE} AS build
WORKDIR /src
# Packages first, so source edits do not redo this layer. No torch wheel (--no-torch), and the
# tests' packages are not installed without --tests.
COPY scripts/setup.sh scripts/build.sh scripts/requirements.txt scripts/
RUN scripts/setup.sh --no-torch && rm -rf /var/lib/apt/lists/*
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
    scripts/build.sh -DLMTRAIN_BUILD_TRAINER=OFF -DLMTRAIN_BUILD_TESTS=OFF
RUN mkdir -p /out/bin && cp build/bin/lm-server build/bin/lmctl /out/bin/ && \
    deploy/docker/runtime-packages.sh /out/bin/* > /out/runtime-packages.txt

FROM ${DEBIAN_IMAGE}
COPY --from=build /out/runtime-packages.txt /tmp/
RUN apt-get update -qq && \
    xargs -a /tmp/runtime-packages.txt apt-get install -y -qq --no-install-recommends && \
    apt-get install -y -qq --no-install-recommends ca-certificates && \
    rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt
RUN groupadd --gid 10001 lmtrain && \
    useradd --uid 10001 --gid 10001 --home-dir /var/lib/lmtrain --create-home lmtrain
COPY --from=build /out/bin/ /opt/lmtrain/bin/
ENV PATH=/opt/lmtrain/bin:$PATH
USER 10001:10001
WORKDIR /var/lib/lmtrain
VOLUME ["/var/lib/lmtrain"]
EXPOSE 50051 8080
ENTRYPOINT ["lm-server"]
CMD ["--listen", "0.0.0.0:50051", "--http-listen", "0.0.0.0:8080", "--data-dir", "/var/lib/lmtrain"]
