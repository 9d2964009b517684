package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/beeburst/beeburst/internal/bench"
)

// fakeSysfs materializes testdata/sysfs.txtar into a directory: files as they are, and a
// file whose content is "symlink TARGET" as a symbolic link.
func fakeSysfs(t *testing.T) string {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("testdata", "sysfs.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, f := range ar.Files {
		p := filepath.Join(root, f.Name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(strings.TrimSpace(string(f.Data)), "symlink "); ok {
			err = os.Symlink(target, p)
		} else {
			err = os.WriteFile(p, f.Data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestBlockDeviceFromFakeSysfs(t *testing.T) {
	sys := fakeSysfs(t)
	cases := []struct {
		name         string
		major, minor uint32
		device       string
		model        string
		backing      string
		note         string
	}{
		{name: "NVMe partition: its disk's model", major: 259, minor: 2, device: "nvme0n1p2", model: "Samsung SSD 980 PRO 1TB"},
		{name: "NVMe disk", major: 259, minor: 0, device: "nvme0n1", model: "Samsung SSD 980 PRO 1TB"},
		{name: "SATA disk: the ATA vendor is no maker", major: 8, minor: 0, device: "sda", model: "Samsung SSD 860"},
		{name: "loop device with its backing file", major: 7, minor: 3, device: "loop3", model: "loop", backing: "/var/lib/beeburst-testbed/worker-1/nvme.img"},
		{name: "loop device, backing file unreadable", major: 7, minor: 4, device: "loop4", model: "loop", note: "loop4's backing file is not readable"},
		{name: "virtio disk: no model, the driver named", major: 254, minor: 0, device: "vda", note: "no model for vda (driver virtio_blk)"},
		{name: "device-mapper: the disks below", major: 253, minor: 0, device: "dm-0", model: "Samsung SSD 980 PRO 1TB, INTEL SSDPE2KX010T8"},
		{name: "unknown device number", major: 9, minor: 9, note: "9:9 is not in"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var h bench.Hardware
			blockDevice(&h, sys, tc.major, tc.minor)
			if h.Device != tc.device || h.Model != tc.model || h.BackingFile != tc.backing {
				t.Errorf("got device %q model %q backing %q, want %q %q %q", h.Device, h.Model, h.BackingFile, tc.device, tc.model, tc.backing)
			}
			notes := strings.Join(h.Notes, "; ")
			if tc.note == "" && notes != "" || !strings.Contains(notes, tc.note) {
				t.Errorf("notes %q, want %q", notes, tc.note)
			}
		})
	}
}

func TestLinkFromFakeSysfs(t *testing.T) {
	sys := fakeSysfs(t)
	ifs := []netInterface{
		{Name: "lo", Index: 1, Addrs: []net.IP{net.ParseIP("127.0.0.1")}},
		{Name: "eth0", Index: 2, Addrs: []net.IP{net.ParseIP("10.0.0.5"), net.ParseIP("fd00::5")}},
		{Name: "veth0", Index: 3, Addrs: []net.IP{net.ParseIP("10.1.0.5")}},
		{Name: "br0", Index: 4, Addrs: []net.IP{net.ParseIP("10.2.0.5")}},
		{Name: "bond0", Index: 5, Addrs: []net.IP{net.ParseIP("10.3.0.5")}},
		{Name: "eth1", Index: 6, Addrs: []net.IP{net.ParseIP("10.4.0.5")}},
		{Name: "vlan10", Index: 7, Addrs: []net.IP{net.ParseIP("10.5.0.5")}},
		{Name: "eth2", Index: 8, Addrs: []net.IP{net.ParseIP("10.7.0.5")}},
		// Same name as in sysfs, another index: sysfs of another network namespace.
		{Name: "eth0", Index: 42, Addrs: []net.IP{net.ParseIP("10.6.0.5")}},
	}
	cases := []struct {
		addr  string
		iface string
		mbps  int64
		note  string
	}{
		{addr: "10.0.0.5", iface: "eth0", mbps: 25000},
		{addr: "fd00::5", iface: "eth0", mbps: 25000},
		{addr: "10.1.0.5", iface: "veth0", note: "veth0 is a virtual interface (no device below it, e.g. a veth): its 10000 Mb/s is its driver's constant"},
		{addr: "10.2.0.5", iface: "br0", note: "br0 is a virtual interface (bridge)"},
		{addr: "10.3.0.5", iface: "bond0", mbps: 50000},
		{addr: "10.4.0.5", iface: "eth1", note: "eth1 reports no speed"},
		{addr: "10.5.0.5", iface: "vlan10", mbps: 25000},
		{addr: "10.7.0.5", iface: "eth2", note: "eth2 reports 4294967295 Mb/s, more than any link (100 Tbit/s): not trusted"},
		{addr: "10.6.0.5", iface: "eth0", note: "sysfs of another network namespace"},
		{addr: "10.9.9.9", note: "no interface carries 10.9.9.9"},
		{addr: "worker-1", note: `"worker-1" is not an IP address`},
	}
	for _, tc := range cases {
		t.Run(tc.addr, func(t *testing.T) {
			var h bench.Hardware
			discoverLink(&h, sys, tc.addr, ifs)
			if h.LinkAddress != tc.addr || h.Interface != tc.iface || h.LinkMbps != tc.mbps {
				t.Errorf("got address %q interface %q %d Mb/s, want %q %q %d", h.LinkAddress, h.Interface, h.LinkMbps, tc.addr, tc.iface, tc.mbps)
			}
			notes := strings.Join(h.Notes, "; ")
			if tc.note == "" && notes != "" || !strings.Contains(notes, tc.note) {
				t.Errorf("notes %q, want %q", notes, tc.note)
			}
		})
	}
}

// This machine's own /sys, read as the probe reads a node's: the device below a temporary
// directory and the link of the first address of a non-loopback interface (loopback when
// there is none, which reports no speed). Nothing is skipped: a Linux machine has both.
func TestHardwareOfThisMachine(t *testing.T) {
	if _, err := os.Stat("/sys/class/net"); err != nil {
		t.Fatalf("no sysfs at /sys: %v", err)
	}
	ifs, err := hostInterfaces()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1"
	for _, i := range ifs {
		if i.Name != "lo" && len(i.Addrs) > 0 {
			addr = i.Addrs[0].String()
			break
		}
	}
	dir := t.TempDir()
	h := discoverHardware("/sys", dir, addr, hostInterfaces)
	t.Logf("%s and link of %s on this machine: interface %q, %d Mb/s; device %s (%s), model %q, backing file %q, file system %d bytes; notes %q",
		dir, addr, h.Interface, h.LinkMbps, h.Device, h.DeviceNumber, h.Model, h.BackingFile, h.FileSystemBytes, h.Notes)
	if h.Interface == "" {
		t.Errorf("the interface of %s was not found: %v", addr, h.Notes)
	}
	if h.LinkMbps == 0 && !strings.Contains(strings.Join(h.Notes, ";"), "link: ") {
		t.Errorf("no speed and no note saying why")
	}
	if h.FileSystemBytes <= 0 || h.DeviceNumber == "" {
		t.Errorf("the file system of %s was not read: %+v", dir, h)
	}
	if !strings.HasPrefix(h.DeviceNumber, "0:") && h.Device == "" {
		t.Errorf("device %s is not named from /sys/dev/block: %v", h.DeviceNumber, h.Notes)
	}
	if h.Device != "" && h.Model == "" && !strings.Contains(strings.Join(h.Notes, ";"), "no model") {
		t.Errorf("no model and no note saying why: %v", h.Notes)
	}
}

// probe-device reports what it discovered beside what it measured.
func TestProbeDeviceReportsHardware(t *testing.T) {
	needTools(t, "fio")
	dir := t.TempDir()
	code, r, stderr := agent(t, "-q", "probe-device", "--dir", dir, "--runtime", "1s", "--jobs", "1", "--size", "8M",
		"--direct=false", "--link-address", "127.0.0.1")
	if code != exitOK {
		t.Fatalf("exit %d: %s %s", code, r.Message, stderr)
	}
	h := r.Hardware
	if h == nil || h.FileSystemBytes <= 0 || h.LinkAddress != "127.0.0.1" || h.Interface == "" {
		t.Fatalf("report lacks the hardware: %+v", h)
	}
	assertEmpty(t, dir)
}
