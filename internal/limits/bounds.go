package limits

import (
	"fmt"
	"math"
)

// Upper bounds of the figures beeburst accepts from outside: tool outputs, sweep and
// monitoring files, documented hardware. Each is far above any hardware that exists, so that
// no real measurement is ever refused, and far below the magnitudes where the arithmetic
// breaks (whole bytes per second in an int64, sums over many nodes), so that a corrupt output,
// a typo or a unit mistake (bits for bytes, "T" for "G") is refused with a message naming the
// figure instead of being clamped, without a word, into a published limit.
const (
	// MaxLinkBitsPerSecond bounds one node's link signalling rate: 100 Tbit/s. The fastest
	// standardised links are 1.6 Tbit/s Ethernet (IEEE 802.3dj) and 800 Gbit/s InfiniBand XDR;
	// even eight such ports bonded stay below 13 Tbit/s.
	MaxLinkBitsPerSecond = 1e14

	// MaxDeviceBytesPerSecond bounds one storage device: 1 TB/s. A device reaches the node
	// through at most a PCIe x16 slot, which carries 64 GB/s per direction at PCIe 5.0 and
	// 256 GB/s at 7.0; node-local "devices" on tmpfs or the page cache are bounded by memory
	// bandwidth, a few hundred GB/s per socket.
	MaxDeviceBytesPerSecond = 1e12

	// MaxBytesPerSecond bounds any other bandwidth: a node, a fabric, an aggregate over all
	// nodes, a sweep point, a benchmark result: 100 PB/s. MaxNodes (65,536) nodes each moving
	// 1.5 TB/s, more than the memory bandwidth of any node, is 1e17; the fastest file systems
	// ever measured are near 10 TB/s. It also keeps every figure, rounded to whole bytes per
	// second, 90 times below the int64 limit (9.2e18), so sums of figures cannot overflow.
	MaxBytesPerSecond = 1e17

	// MaxOpsPerSecond bounds any operation rate (IOPS, file creates, stats): 1e15. Every
	// operation is at least one system call, and a core makes at most about 1e7 of them per
	// second: MaxNodes nodes x 1,024 cores x 1e7 is 6.7e14.
	MaxOpsPerSecond = 1e15

	// MaxRuntimeSeconds bounds a benchmark's runtime: a year (366 days). No benchmark of a
	// burst buffer runs that long; a larger figure is a unit mistake or a garbled output.
	MaxRuntimeSeconds = 366 * 24 * 3600

	// MaxDevicesPerNode bounds devices per node, for the same reason as MaxNodes: a typo
	// ("devices: 40000000") is an error. The densest storage servers hold about 100 drives.
	MaxDevicesPerNode = 1 << 12
)

// CheckBytesPerSecond checks that v is a finite, non-negative bandwidth no greater than max
// (MaxBytesPerSecond, MaxDeviceBytesPerSecond): the error says which bound and why, with
// what the value would be in the unit people write it in.
func CheckBytesPerSecond(v, max float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("%v is not a finite number", v)
	case v < 0:
		return fmt.Errorf("%g must not be negative", v)
	case v > max:
		return fmt.Errorf("%g bytes/s is more than %s (%g bytes/s): faster than any real hardware, so the figure is corrupt or in the wrong unit",
			v, FormatBytesPerSecond(max), max)
	}
	return nil
}

// CheckOpsPerSecond is CheckBytesPerSecond for operation rates, bounded by MaxOpsPerSecond.
func CheckOpsPerSecond(v float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("%v is not a finite number", v)
	case v < 0:
		return fmt.Errorf("%g must not be negative", v)
	case v > MaxOpsPerSecond:
		return fmt.Errorf("%g operations/s is more than %g: faster than any real system, so the figure is corrupt or in the wrong unit",
			v, float64(MaxOpsPerSecond))
	}
	return nil
}

// CheckRuntimeSeconds checks a runtime in seconds: finite, non-negative, at most
// MaxRuntimeSeconds.
func CheckRuntimeSeconds(v float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("%v is not a finite number", v)
	case v < 0:
		return fmt.Errorf("%g must not be negative", v)
	case v > MaxRuntimeSeconds:
		return fmt.Errorf("%g s is more than a year: no benchmark runs that long, so the figure is corrupt or in the wrong unit", v)
	}
	return nil
}

// CheckLinkBitsPerSecond checks a link signalling rate: positive, finite, at most
// MaxLinkBitsPerSecond.
func CheckLinkBitsPerSecond(v float64) error {
	switch {
	case !positive(v):
		return fmt.Errorf("link rate must be a positive number of bits per second, not %g", v)
	case v > MaxLinkBitsPerSecond:
		return fmt.Errorf("link rate %g bit/s is more than %s: no link is that fast, so the figure is a typo or in the wrong unit",
			v, FormatBitsPerSecond(MaxLinkBitsPerSecond))
	}
	return nil
}
