package bench

// Hardware is what the device probe read about its node from sysfs: the network interface
// that carries the node's address with its speed, and the block device below the probed
// path with its model. A figure the agent cannot read, or does not trust, is left out and a
// note says why: the operator uses discovered figures only where nothing documents them, and
// a wrong figure is worse than an unknown one.
type Hardware struct {
	// LinkAddress is the node address whose interface was looked for (--link-address);
	// empty when link discovery was not asked for.
	LinkAddress string `json:"linkAddress,omitempty"`
	// Interface is the network interface that carries LinkAddress.
	Interface string `json:"interface,omitempty"`
	// LinkMbps is the interface's speed in Mb/s (10^6 bits/s) as the kernel reports it
	// (/sys/class/net/<interface>/speed): the data rate, after the line encoding. 0: unknown
	// or not trusted (a veth or a bridge reports its driver's constant, not a link's).
	LinkMbps int64 `json:"linkMbps,omitempty"`
	// Device is the block device that holds the probed path, e.g. "nvme0n1p2", and
	// DeviceNumber its major:minor.
	Device       string `json:"device,omitempty"`
	DeviceNumber string `json:"deviceNumber,omitempty"`
	// Model is the model the kernel reports for the device's disk (a partition's parent; the
	// disks below device-mapper or md, comma-separated), "loop" for a loop device, empty when
	// the kernel reports none (virtio disks: a note names the driver).
	Model string `json:"model,omitempty"`
	// BackingFile is a loop device's backing file.
	BackingFile string `json:"backingFile,omitempty"`
	// FileSystemBytes is the size of the file system at the probed path (statfs).
	FileSystemBytes int64 `json:"fileSystemBytes,omitempty"`
	// Notes say what could not be discovered, and why.
	Notes []string `json:"notes,omitempty"`
}
