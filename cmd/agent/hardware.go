package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/limits"
)

// Hardware discovery reads the kernel's view of the node from sysfs: the speed of the
// interface that carries the node's address, and the model of the device below the storage
// path. Both are figures a datasheet would give (stage 1 of METHOD.md) where nobody
// documented them. The sysfs root is a parameter so that tests read a fake tree
// (testdata/sys) as well as this machine's /sys.

// netInterface is one network interface of the agent's network namespace.
type netInterface struct {
	Name  string
	Index int
	Addrs []net.IP
}

// hostInterfaces lists the interfaces of the agent's network namespace. In a pod this is the
// node's only with hostNetwork; the operator asks for link discovery only then.
func hostInterfaces() ([]netInterface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	out := make([]netInterface, 0, len(ifs))
	for _, i := range ifs {
		ni := netInterface{Name: i.Name, Index: i.Index}
		addrs, err := i.Addrs()
		if err != nil {
			return nil, err
		}
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				ni.Addrs = append(ni.Addrs, ipn.IP)
			}
		}
		out = append(out, ni)
	}
	return out, nil
}

// interfaceWith is the interface of ifs that holds ip, nil when none does.
func interfaceWith(ifs []netInterface, ip net.IP) *netInterface {
	for i := range ifs {
		if slices.ContainsFunc(ifs[i].Addrs, ip.Equal) {
			return &ifs[i]
		}
	}
	return nil
}

// discoverLink fills h's link fields: the interface that carries addr and its speed, if the
// kernel reports one that belongs to a link.
func discoverLink(h *bench.Hardware, sys, addr string, ifs []netInterface) {
	h.LinkAddress = addr
	ip := net.ParseIP(addr)
	if ip == nil {
		h.Notes = append(h.Notes, fmt.Sprintf("link: %q is not an IP address", addr))
		return
	}
	found := interfaceWith(ifs, ip)
	if found == nil {
		h.Notes = append(h.Notes, fmt.Sprintf("link: no interface carries %s here (is the probe in the node's network namespace?)", addr))
		return
	}
	h.Interface = found.Name
	dir := filepath.Join(sys, "class", "net", found.Name)
	// sysfs shows the network namespace that mounted it; a /sys from another namespace would
	// have another interface of the same name.
	if idx, err := readInt(filepath.Join(dir, "ifindex")); err != nil || idx != int64(found.Index) {
		h.Notes = append(h.Notes, fmt.Sprintf("link: %s in sysfs is not the interface that carries %s (sysfs of another network namespace)", found.Name, addr))
		return
	}
	speed, err := readInt(filepath.Join(dir, "speed"))
	if err != nil || speed <= 0 {
		// -1 (SPEED_UNKNOWN) or EINVAL: virtio NICs, loopback, a link that is down.
		h.Notes = append(h.Notes, fmt.Sprintf("link: %s reports no speed", found.Name))
		return
	}
	if kind, ok := virtualKind(dir); ok {
		h.Notes = append(h.Notes, fmt.Sprintf("link: %s is a virtual interface (%s): its %d Mb/s is its driver's constant, not a link's",
			found.Name, kind, speed))
		return
	}
	if float64(speed)*1e6 > limits.MaxLinkBitsPerSecond {
		// A driver's garbage (an unsigned -1): the operator would refuse it as a link figure.
		h.Notes = append(h.Notes, fmt.Sprintf("link: %s reports %d Mb/s, more than any link (%s): not trusted",
			found.Name, speed, limits.FormatBitsPerSecond(limits.MaxLinkBitsPerSecond)))
		return
	}
	h.LinkMbps = speed
}

// virtualKind says whether an interface's speed is not a link's, and what the interface is.
// A physical interface has a device below it. Of the virtual ones, a bond reports the sum of
// its slaves and a VLAN or macvlan its lower device's speed, which are links' figures; a
// bridge reports its fastest port (pods' veths among them), a veth a constant.
func virtualKind(dir string) (string, bool) {
	if _, err := os.Stat(filepath.Join(dir, "device")); err == nil {
		return "", false
	}
	kind := devType(dir)
	switch {
	case kind == "bridge" || exists(filepath.Join(dir, "bridge")):
		return "bridge", true
	case exists(filepath.Join(dir, "bonding")):
		return "", false
	case hasLower(dir):
		return "", false
	case kind != "":
		return kind, true
	}
	return "no device below it, e.g. a veth", true
}

// devType is DEVTYPE from the interface's uevent (bridge, vlan, bond, wlan...), if any.
func devType(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "uevent"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "DEVTYPE="); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func hasLower(dir string) bool {
	ents, _ := os.ReadDir(dir)
	return slices.ContainsFunc(ents, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), "lower_") })
}

// discoverDevice fills h's device fields for the file system at path: its size, and the block
// device it lives on with the device's model.
func discoverDevice(h *bench.Hardware, sys, path string) {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(path, &fs); err == nil {
		h.FileSystemBytes = int64(fs.Blocks) * int64(fs.Bsize)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		h.Notes = append(h.Notes, fmt.Sprintf("device: %v", err))
		return
	}
	major, minor := unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev))
	h.DeviceNumber = fmt.Sprintf("%d:%d", major, minor)
	if major == 0 {
		// Anonymous device numbers: tmpfs, overlay, NFS, btrfs subvolumes, FUSE.
		h.Notes = append(h.Notes, fmt.Sprintf("device: the file system at %s has no block device of its own (device %s: tmpfs, overlay, btrfs, a network or FUSE file system)",
			path, h.DeviceNumber))
		return
	}
	blockDevice(h, sys, major, minor)
}

// blockDevice names the block device major:minor and finds its model: a partition's disk's,
// a loop device's backing file, the disks below device-mapper or md.
func blockDevice(h *bench.Hardware, sys string, major, minor uint32) {
	dir, err := filepath.EvalSymlinks(filepath.Join(sys, "dev", "block", fmt.Sprintf("%d:%d", major, minor)))
	if err != nil {
		h.Notes = append(h.Notes, fmt.Sprintf("device: %d:%d is not in %s/dev/block", major, minor, sys))
		return
	}
	h.Device = filepath.Base(dir)
	if b, err := os.ReadFile(filepath.Join(diskOf(dir), "loop", "backing_file")); err == nil || isLoop(dir) {
		h.Model = "loop"
		h.BackingFile = strings.TrimSpace(string(b))
		if h.BackingFile == "" {
			h.Notes = append(h.Notes, fmt.Sprintf("device: %s's backing file is not readable", h.Device))
		}
		return
	}
	var models, silent []string
	collectModels(dir, 0, &models, &silent)
	h.Model = strings.Join(models, ", ")
	if len(silent) > 0 {
		h.Notes = append(h.Notes, fmt.Sprintf("device: the kernel reports no model for %s", strings.Join(silent, ", ")))
	}
}

// collectModels adds the model of dir's disk, or of the devices below it (device-mapper, md),
// to models; devices without one go to silent, with their driver where known.
func collectModels(dir string, depth int, models, silent *[]string) {
	disk := diskOf(dir)
	if m := readTrimmed(filepath.Join(disk, "device", "model")); m != "" {
		if v := readTrimmed(filepath.Join(disk, "device", "vendor")); v != "" && v != "ATA" && !strings.HasPrefix(m, v) && !strings.HasPrefix(v, "0x") {
			m = v + " " + m
		}
		if !slices.Contains(*models, m) {
			*models = append(*models, m)
		}
		return
	}
	slaves, _ := os.ReadDir(filepath.Join(disk, "slaves"))
	if len(slaves) > 0 && depth < 4 {
		for _, s := range slaves {
			if sub, err := filepath.EvalSymlinks(filepath.Join(disk, "slaves", s.Name())); err == nil {
				collectModels(sub, depth+1, models, silent)
			}
		}
		return
	}
	name := filepath.Base(disk)
	if drv, err := os.Readlink(filepath.Join(disk, "device", "driver")); err == nil {
		name += " (driver " + filepath.Base(drv) + ")"
	}
	*silent = append(*silent, name)
}

// diskOf is the disk of a partition (its parent directory in sysfs), else dir itself.
func diskOf(dir string) string {
	if exists(filepath.Join(dir, "partition")) {
		return filepath.Dir(dir)
	}
	return dir
}

func isLoop(dir string) bool { return strings.HasPrefix(filepath.Base(diskOf(dir)), "loop") }

func readTrimmed(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func readInt(path string) (int64, error) {
	s := readTrimmed(path)
	if s == "" {
		return 0, errors.New("empty")
	}
	return strconv.ParseInt(s, 10, 64)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// discoverHardware is what probe-device reports about its node: the device below dir, and,
// when linkAddress is given, the link that carries it.
func discoverHardware(sys, dir, linkAddress string, list func() ([]netInterface, error)) *bench.Hardware {
	h := &bench.Hardware{}
	discoverDevice(h, sys, dir)
	if linkAddress != "" {
		ifs, err := list()
		if err != nil {
			h.LinkAddress = linkAddress
			h.Notes = append(h.Notes, fmt.Sprintf("link: listing interfaces: %v", err))
		} else {
			discoverLink(h, sys, linkAddress, ifs)
		}
	}
	return h
}
