# The operator image (the manager): one static binary on a distroless base.
#
#   make docker-build                 # this machine's platform, into the local image store
#   make docker-buildx                # linux/amd64 and linux/arm64, pushed to $(REGISTRY)
#
# The Go stage runs on the build platform and cross-compiles for the target one, so a
# multi-arch build needs no emulation here. GOLANG_IMAGE and BASE_IMAGE name the base images;
# their defaults are the public ones. Where no registry can be reached, hack/docker.sh makes
# local stand-ins and passes them (docs/install.md, "Building the images").
ARG GOLANG_IMAGE=golang:1.26-bookworm
ARG BASE_IMAGE=gcr.io/distroless/static-debian12:nonroot

FROM --platform=$BUILDPLATFORM ${GOLANG_IMAGE} AS builder
ARG TARGETOS
ARG TARGETARCH
# The release version (make VERSION=...): the manager logs it at start.
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
# The module and build caches outlive the build (BuildKit cache mounts): a second image, or a
# rebuild after a change, compiles only what changed.
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY controllers/ controllers/
COPY internal/ internal/
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} GOFLAGS=-buildvcs=false \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/manager ./cmd/manager

FROM ${BASE_IMAGE}
ARG VERSION=dev
LABEL org.opencontainers.image.title="beeburst manager" \
      org.opencontainers.image.description="The beeburst operator: a job's own burst buffer with measured performance limits" \
      org.opencontainers.image.source="https://github.com/beeburst/beeburst" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}"
COPY --from=builder /out/manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
