package main

import (
	"net"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/monitor"
)

// procDir is where the node's /proc is (--proc), for the device and link meters.
var procDir = "/proc"

// settle writes out what the file system under dir still holds for earlier work (syncfs):
// the journal, and the frees of deleted files, which a file system mounted with discard
// turns into discards at its next commit. Before a measurement, so that another run's
// leftovers do not land in it; after a run removed its files, so that its own do not land in
// the next run on the node. Errors only cost that.
func settle(dir string) {
	f, err := os.Open(dir)
	if err != nil {
		logf("settle %s: %v", dir, err)
		return
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		logf("settle %s: syncfs: %v", dir, err)
	}
}

// deviceMeter reads the counters of the block device under a directory in /proc/diskstats.
type deviceMeter struct {
	major, minor uint32
	name         string
}

// newDeviceMeter is the meter of dir's block device; nil when dir has none of its own (tmpfs,
// overlay, a network or FUSE file system) or /proc/diskstats does not list it.
func newDeviceMeter(dir string) *deviceMeter {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return nil
	}
	m := &deviceMeter{major: unix.Major(uint64(st.Dev)), minor: unix.Minor(uint64(st.Dev))}
	if m.major == 0 {
		return nil
	}
	if _, ok := m.read(); !ok {
		return nil
	}
	return m
}

func (m *deviceMeter) read() (monitor.Counters, bool) {
	if m == nil {
		return monitor.Counters{}, false
	}
	text, err := os.ReadFile(filepath.Join(procDir, "diskstats"))
	if err != nil {
		return monitor.Counters{}, false
	}
	name, c, ok := monitor.DeviceByNumber(text, m.major, m.minor)
	m.name = name
	return c, ok
}

// metered runs fn and records on res what the meter's device read and wrote meanwhile.
func (m *deviceMeter) metered(fn func() (*bench.Result, error)) (*bench.Result, error) {
	before, ok := m.read()
	res, err := fn()
	if err != nil || res == nil || !ok {
		return res, err
	}
	if after, ok := m.read(); ok && after.In >= before.In && after.Out >= before.Out {
		res.Device = m.name
		res.DeviceBytes = int64(after.In - before.In + after.Out - before.Out)
	}
	return res, err
}

// linkMeter reads the counters of the network interface that holds the address the kernel
// sends from toward a host, in /proc/net/dev (of the agent's network namespace: a link probe
// runs in the node's).
type linkMeter struct {
	name string
}

// newLinkMeter is the meter of the interface with the address the kernel sends from toward host:
// a connected UDP socket asks the routing table without sending anything. Nil when that
// interface cannot be told.
func newLinkMeter(host string) *linkMeter {
	c, err := net.Dial("udp", net.JoinHostPort(host, "9"))
	if err != nil {
		return nil
	}
	local := c.LocalAddr().(*net.UDPAddr).IP
	_ = c.Close()
	ifs, err := hostInterfaces()
	if err != nil {
		return nil
	}
	ni := interfaceWith(ifs, local)
	if ni == nil {
		return nil
	}
	m := &linkMeter{name: ni.Name}
	if _, ok := m.read(); !ok {
		return nil
	}
	return m
}

// read is the interface's counters (In received, Out sent).
func (m *linkMeter) read() (monitor.Counters, bool) {
	if m == nil {
		return monitor.Counters{}, false
	}
	text, err := os.ReadFile(filepath.Join(procDir, "net", "dev"))
	if err != nil {
		return monitor.Counters{}, false
	}
	all, err := monitor.ParseNetDev(text)
	if err != nil {
		return monitor.Counters{}, false
	}
	c, ok := all[m.name]
	return c, ok
}

// record puts on res what the interface sent and received since before. An interface that
// sent less than the probe's own bytes did not carry them (the address lives on another
// interface than the one the packets leave by: a loopback or dummy address, a bridge's port):
// then nothing is recorded, and the probe cannot tell.
func (m *linkMeter) record(res *bench.Result, before monitor.Counters) {
	after, ok := m.read()
	if !ok || after.Out < before.Out || after.In < before.In {
		return
	}
	sent, received := int64(after.Out-before.Out), int64(after.In-before.In)
	if sent < res.Bytes {
		logf("%s sent %d bytes while the probe moved %d: not the interface that carried them; other traffic on the link goes uncounted", m.name, sent, res.Bytes)
		return
	}
	res.Interface, res.InterfaceSentBytes, res.InterfaceReceivedBytes = m.name, sent, received
}
