package limits

import "testing"

// One formatter writes every byte figure; each entry point keeps the shape its readers know.
func TestFormatters(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{FormatBytesPerSecond(60606.0606e6), "60.606 GB/s"},
		{FormatBytesPerSecond(999.9996e9), "1 TB/s"},
		{FormatBytesPerSecond(12.5), "12.5 B/s"},
		{FormatBytesPerSecondFixed(1.2e9, 2), "1.20 GB/s"},
		{FormatBitsPerSecond(100e9), "100 Gbit/s"},
		{FormatBytes(512), "512 B"},
		{FormatBytes(999), "999 B"},
		{FormatBytes(4e6), "4.0 MB"},
		{FormatBytes(999999), "1000.0 kB"},
		{FormatBytes(2.5e9), "2.5 GB"},
		{FormatCapacity(512), "512 B"},
		{FormatCapacity(3.5 * (1 << 30)), "3.5 GiB"},
		{FormatCapacity(1 << 40), "1 TiB"},
		{FormatCapacity(1023.99), "1 KiB"},
		{FormatBytesPerSecond(0.0 / zero()), "invalid"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func zero() float64 { return 0 }
