# kind's node base image (kind's images/base/Dockerfile, "base" stage), with Debian's
# containerd, runc and CNI plugins in place of the ones kind builds from GitHub: our machines
# reach Debian's mirror and the Go module proxy, not GitHub or a registry.
#
# The build context is made by hack/kind/node-image.sh: files/ is images/base/files of the
# kind module the project pins (go.mod), unchanged - the entrypoint, systemd units and
# containerd configuration every kind node runs - and crictl is built from its Go module.
ARG DEBIAN_IMAGE=debian:bookworm-slim
FROM $DEBIAN_IMAGE

# The packages of kind's base stage (less nfs-common and open-iscsi: no networked storage
# here), then Debian's containerd, runc and containernetworking-plugins - before kind's files,
# so that no package's own configuration replaces kind's.
COPY --chmod=0755 files/usr/local/bin/clean-install /usr/local/bin/
RUN DEBIAN_FRONTEND=noninteractive clean-install \
      systemd \
      conntrack iptables nftables iproute2 ethtool util-linux mount kmod \
      libseccomp2 pigz fuse-overlayfs \
      bash ca-certificates curl jq procps \
      containerd runc containernetworking-plugins \
    && rm -f /etc/containerd/config.toml

COPY --chmod=0755 files/usr/local/bin/* /usr/local/bin/
COPY --chmod=0644 files/kind/ /kind/
COPY --chmod=0755 files/kind/bin/ /kind/bin/
COPY --chmod=0644 files/LICENSES/* /LICENSES/
COPY --chmod=0644 files/etc/* /etc/
COPY --chmod=0644 files/etc/containerd/* /etc/containerd/
COPY --chmod=0644 files/etc/default/* /etc/default/
COPY --chmod=0644 files/etc/sysctl.d/* /etc/sysctl.d/
COPY --chmod=0644 files/etc/systemd/system/* /etc/systemd/system/
COPY --chmod=0644 files/etc/systemd/system/kubelet.service.d/* /etc/systemd/system/kubelet.service.d/
COPY --chmod=0755 crictl /usr/local/bin/crictl

# kind's clean-ups; kind's units and hooks expect containerd in /usr/local/bin and the CNI
# plugins in /opt/cni/bin. The base runtime spec is made as kind makes it: `ctr oci spec`
# plus the product_uuid hook, without rlimits.
RUN chmod 755 /kind/bin \
    && find /lib/systemd/system/sysinit.target.wants/ -name "systemd-tmpfiles-setup.service" -delete \
    && rm -f /lib/systemd/system/multi-user.target.wants/* \
    && rm -f /etc/systemd/system/*.wants/* \
    && rm -f /lib/systemd/system/local-fs.target.wants/* \
    && rm -f /lib/systemd/system/sockets.target.wants/*udev* \
    && rm -f /lib/systemd/system/sockets.target.wants/*initctl* \
    && rm -f /lib/systemd/system/basic.target.wants/* \
    && echo "ReadKMsg=no" >> /etc/systemd/journald.conf \
    && ln -s "$(which systemd)" /sbin/init \
    && ln -s /usr/bin/containerd /usr/bin/ctr /usr/bin/containerd-shim-runc-v2 /usr/local/bin/ \
    && mkdir -p /opt/cni/bin && ln -s /usr/lib/cni/* /opt/cni/bin/ \
    && ctr oci spec \
        | jq '.hooks.createContainer[.hooks.createContainer| length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' \
        | jq 'del(.process.rlimits)' \
        > /etc/containerd/cri-base.json \
    && containerd --version && runc --version && crictl --version

RUN systemctl enable kubelet.service \
    && systemctl enable containerd.service \
    && systemctl enable undo-mount-hacks.service \
    && systemctl mask systemd-binfmt.service \
    && mkdir -p /etc/kubernetes/manifests

ENV container=docker
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]
