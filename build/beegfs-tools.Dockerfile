# The BeeGFS tools image of the beegfs engine (internal/engine/beegfs DefaultClientImage,
# ghcr.io/beeburst/beegfs-tools:8.3.1). Its pods need:
#   - the `beegfs` command-line tool, which the readiness, striping, chunk-size and StorageBench
#     tasks run against the burst buffer's management service;
#   - mount(8) and umount(8) (util-linux), with which the client pods mount the file system
#     through the BeeGFS kernel module the node already has (the module is not in any image);
#   - sh and coreutils, grep, sed, dmesg for the engine's scripts.
# Nothing of BeeGFS is compiled here: the CLI is ThinkParQ's published Debian package
# (beegfs-tools) of the release, from ThinkParQ's package repository.
#
#   make docker-build-beegfs-tools            # this machine's platform
#   make docker-buildx                        # with the other images, linux/amd64 and linux/arm64
#
# ThinkParQ's package repository (www.beegfs.io) cannot be reached from the machines this
# project is developed and tested on (its name does not resolve there), so this image is built
# by the release workflow only, on GitHub's runners; the repository's URL layout below follows
# ThinkParQ's own container build and install guide and was not checked from here. To build it
# against a mirror of that repository, pass --build-arg BEEGFS_REPO=URL.

ARG DEBIAN_IMAGE=debian:bookworm-slim
FROM ${DEBIAN_IMAGE}
ARG BEEGFS_VERSION=8.3.1
ARG BEEGFS_REPO=https://www.beegfs.io/release/beegfs_${BEEGFS_VERSION}
ARG DEBIAN_CODENAME=bookworm
ARG VERSION=${BEEGFS_VERSION}
ARG DEBIAN_FRONTEND=noninteractive
# The repository's signing key and its sources list, as ThinkParQ publishes them per release.
# curl and gnupg are needed only for this step and leave again.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && curl -fsSL "${BEEGFS_REPO}/gpg/GPG-KEY-beegfs" -o /etc/apt/trusted.gpg.d/beegfs.asc \
 && chmod 0644 /etc/apt/trusted.gpg.d/beegfs.asc \
 && curl -fsSL "${BEEGFS_REPO}/dists/beegfs-${DEBIAN_CODENAME}.list" -o /etc/apt/sources.list.d/beegfs.list \
 && apt-get update \
 && apt-get install -y --no-install-recommends "beegfs-tools=${BEEGFS_VERSION}*" util-linux mount grep sed coreutils \
 && apt-get purge -y --auto-remove curl \
 && rm -rf /var/lib/apt/lists/*
# ThinkParQ's packages install below /opt/beegfs.
ENV PATH=/opt/beegfs/sbin:/opt/beegfs/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Every command the engine's scripts run (hack/dockerfiles checks this list against them).
RUN for c in beegfs sh grep sed timeout dmesg mount umount tee tail head date sleep mkdir rmdir rm cat; do \
      command -v "$c" >/dev/null || { echo "missing: $c" >&2; exit 1; }; \
    done
LABEL org.opencontainers.image.title="beeburst beegfs-tools" \
      org.opencontainers.image.description="The BeeGFS ${BEEGFS_VERSION} command-line tool and mount(8) for beeburst's beegfs engine" \
      org.opencontainers.image.source="https://github.com/beeburst/beeburst" \
      org.opencontainers.image.version="${VERSION}"
ENTRYPOINT []
CMD ["beegfs", "--help"]
