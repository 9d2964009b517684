# The beeburst agent image: the static agent (at /agent, where the operator's node-task pods run
# it) with the tools its tasks run - fio (device probes, sweeps, workload benchmarks), iperf3
# (link probes) - from Debian, and optionally IOR and mdtest built from IOR's source release
# with OpenMPI. The e2e suite's helper pods use its shell and coreutils too.
#
#   make docker-build                                                     # fio, iperf3
#   docker build -f build/agent.Dockerfile --build-arg WITH_IOR=true -t beeburst/agent:dev .  # + IOR, mdtest
#
# Without IOR/mdtest the agent still runs every probe and benchmark with fio; `agent tools`
# (and every Report's "tools") says which tools the image has. Build context: the repository
# root. GOLANG_IMAGE and DEBIAN_IMAGE name the base images; their defaults are the public ones
# (hack/docker.sh passes local stand-ins where no registry can be reached). No `# syntax=`
# line: BuildKit would fetch that frontend from a registry; the built-in one suffices.

ARG GOLANG_IMAGE=golang:1.26-bookworm
ARG DEBIAN_IMAGE=debian:bookworm-slim
# WITH_IOR selects the final stage: agent-ior-false or agent-ior-true. BuildKit builds only
# the stages the selected one needs, so ior-build is skipped without it.
ARG WITH_IOR=false

# --- the agent: one static binary, cross-compiled on the build platform -------------------
FROM --platform=$BUILDPLATFORM ${GOLANG_IMAGE} AS builder
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
# The module and build caches outlive the build (BuildKit cache mounts): a second image, or a
# rebuild after a change, compiles only what changed.
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY api/ api/
COPY internal/ internal/
COPY cmd/ cmd/
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} GOFLAGS=-buildvcs=false \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/agent ./cmd/agent

# --- IOR and mdtest from the IOR source release (optional) --------------------------------
FROM ${DEBIAN_IMAGE} AS ior-build
ARG IOR_VERSION=4.0.0
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl build-essential libopenmpi-dev openmpi-bin \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /build
RUN curl -fsSL "https://github.com/hpc/ior/releases/download/${IOR_VERSION}/ior-${IOR_VERSION}.tar.gz" | tar xz \
 && cd "ior-${IOR_VERSION}" \
 && ./configure --prefix=/opt/ior CC=mpicc \
 && make -j"$(nproc)" \
 && make install \
 && /opt/ior/bin/ior -h >/dev/null

# --- runtime base: fio and iperf3 ---------------------------------------------------------
FROM ${DEBIAN_IMAGE} AS agent-base
ARG VERSION=dev
# iperf3's package asks whether to start a daemon: no.
RUN echo "iperf3 iperf3/start_daemon boolean false" | debconf-set-selections \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends fio iperf3 \
 && rm -rf /var/lib/apt/lists/* \
 && fio --version && iperf3 --version >/dev/null
COPY --from=builder /out/agent /usr/local/bin/agent
# The operator's node-task pods run /agent (the same path in the testbed's images).
RUN ln -s /usr/local/bin/agent /agent
LABEL org.opencontainers.image.title="beeburst agent" \
      org.opencontainers.image.description="Node tasks, probes and benchmarks of the beeburst operator (fio, iperf3)" \
      org.opencontainers.image.source="https://github.com/beeburst/beeburst" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}"
# The agent writes its compact Report to the termination log (--termination-log) and keeps
# its files under the --dir it is given; it needs no other writable path.
ENTRYPOINT ["/usr/local/bin/agent"]
CMD ["tools"]

FROM agent-base AS agent-ior-false

FROM agent-base AS agent-ior-true
RUN apt-get update \
 && apt-get install -y --no-install-recommends openmpi-bin libopenmpi3 openssh-client \
 && rm -rf /var/lib/apt/lists/*
COPY --from=ior-build /opt/ior /opt/ior
ENV PATH=/opt/ior/bin:$PATH \
    OMPI_ALLOW_RUN_AS_ROOT=1 \
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    OMPI_MCA_btl_vader_single_copy_mechanism=none

FROM agent-ior-${WITH_IOR} AS agent
