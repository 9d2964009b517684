// Package units formats figures for people: decimal units, as storage vendors and
// METHOD.md count them (1 GB = 1e9 B).
package units

import "fmt"

// Rate formats bytes per second, e.g. "1.20 GB/s".
func Rate(bytesPerSecond float64) string {
	return Bytes(bytesPerSecond) + "/s"
}

// Bytes formats a byte count with a decimal prefix, e.g. "60.61 GB".
func Bytes(b float64) string {
	switch {
	case b >= 1e15:
		return fmt.Sprintf("%.2f PB", b/1e15)
	case b >= 1e12:
		return fmt.Sprintf("%.2f TB", b/1e12)
	case b >= 1e9:
		return fmt.Sprintf("%.2f GB", b/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.1f MB", b/1e6)
	case b >= 1e3:
		return fmt.Sprintf("%.1f kB", b/1e3)
	}
	return fmt.Sprintf("%.0f B", b)
}
