# syntax=docker/dockerfile:1
# The beeburst benchmark agent image: the static agent, fio and iperf3 from Debian, and
# optionally IOR and mdtest built from IOR's source release with OpenMPI (needs the internet).
#
#   docker build -f build/agent.Dockerfile -t beeburst/agent:dev .                       # fio, iperf3
#   docker build -f build/agent.Dockerfile --build-arg WITH_IOR=true -t beeburst/agent:dev .  # + IOR, mdtest
#
# Without IOR/mdtest the agent still runs every probe and benchmark with fio; `agent tools`
# (and every Report's "tools") says which tools the image has. Build context: the repository root.

ARG GO_VERSION=1.26
ARG DEBIAN_VERSION=bookworm
# WITH_IOR selects the final stage: agent-ior-false or agent-ior-true. BuildKit builds only
# the stages the selected one needs, so ior-build is skipped without it.
ARG WITH_IOR=false

# --- the agent: one static binary ---------------------------------------------------------
FROM golang:${GO_VERSION}-${DEBIAN_VERSION} AS builder
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY internal/ internal/
COPY cmd/ cmd/
RUN CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -ldflags="-s -w" -o /out/agent ./cmd/agent

# --- IOR and mdtest from the IOR source release (optional) --------------------------------
FROM debian:${DEBIAN_VERSION}-slim AS ior-build
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
FROM debian:${DEBIAN_VERSION}-slim AS agent-base
# iperf3's package asks whether to start a daemon: no.
RUN echo "iperf3 iperf3/start_daemon boolean false" | debconf-set-selections \
 && apt-get update \
 && apt-get install -y --no-install-recommends fio iperf3 procps \
 && rm -rf /var/lib/apt/lists/*
COPY --from=builder /out/agent /usr/local/bin/agent
# The operator's node-task pods run /agent (the same path in images built without Docker).
RUN ln -s /usr/local/bin/agent /agent
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
