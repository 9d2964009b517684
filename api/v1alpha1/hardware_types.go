// Documented hardware: the figures stage 1 starts from (spec.hardware, and what was discovered
// per node in status).

package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

// LinkEncoding is the line code of a network link; the usable data rate is the signalling
// rate times the encoding's efficiency.
// +kubebuilder:validation:Enum="8b/10b";"64b/66b";"128b/130b";"256b/257b";"none"
type LinkEncoding string

// Encodings known to the limits engine.
const (
	Encoding8b10b    LinkEncoding = "8b/10b"
	Encoding64b66b   LinkEncoding = "64b/66b"
	Encoding128b130b LinkEncoding = "128b/130b"
	Encoding256b257b LinkEncoding = "256b/257b"
	EncodingNone     LinkEncoding = "none"
)

// HardwareSpec holds the documented hardware figures that stage 1 computes limits from. Rates
// are quantities: "100G" is 100e9 bits per second, "3G" bytes per second 3e9 (decimal).
type HardwareSpec struct {
	// clients are the nodes running the job's processes.
	// +optional
	Clients *ClientsHardware `json:"clients,omitempty"`

	// servers are the nodes running storage services. In a burst buffer these are the same
	// nodes as the clients (see colocated).
	// +optional
	Servers *ServersHardware `json:"servers,omitempty"`

	// fabric is the network between clients and servers. Empty: non-blocking, no service
	// traffic.
	// +optional
	Fabric *FabricHardware `json:"fabric,omitempty"`

	// devices are the storage devices of each server node. Empty: not a known limit (the
	// status says so).
	// +optional
	Devices *DevicesHardware `json:"devices,omitempty"`

	// colocated says clients and storage servers are the same nodes (a burst buffer): only
	// (Ns-1)/Ns of each client's data crosses the network. Empty: inferred - true when
	// clients.nodes and servers.nodes are equal (a BurstBuffer's own nodes, the default), false
	// when they differ; the formula in the status says which was used.
	// +optional
	Colocated *bool `json:"colocated,omitempty"`
}

// ClientsHardware describes the client side.
type ClientsHardware struct {
	// nodes is the number of client nodes (M). Empty: the burst buffer's node count.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +optional
	Nodes *int32 `json:"nodes,omitempty"`

	// processesPerNode is the number of client processes per node (N); each gets link/N.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4096
	// +optional
	ProcessesPerNode *int32 `json:"processesPerNode,omitempty"`

	// link is each client node's network link.
	// +optional
	Link *LinkHardware `json:"link,omitempty"`
}

// ServersHardware describes the storage server side.
type ServersHardware struct {
	// nodes is the number of storage server nodes (Ns). Empty: the burst buffer's node count.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +optional
	Nodes *int32 `json:"nodes,omitempty"`

	// link is each server node's network link.
	// +optional
	Link *LinkHardware `json:"link,omitempty"`
}

// LinkHardware is one node's network link.
type LinkHardware struct {
	// rateBitsPerSecond is the link's signalling rate in bits per second, e.g. "100G".
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="link rateBitsPerSecond must be greater than zero, e.g. 100G"
	// +kubebuilder:validation:XValidation:rule="!quantity(string(self)).isGreaterThan(quantity('100T'))",message="link rateBitsPerSecond must be at most 100T (100 Tbit/s)"
	RateBitsPerSecond resource.Quantity `json:"rateBitsPerSecond"`

	// encoding is the line code applied to the signalling rate: 8b/10b, 64b/66b, 128b/130b,
	// 256b/257b or none (the rate is already the data rate).
	// +kubebuilder:default="none"
	// +optional
	Encoding LinkEncoding `json:"encoding,omitempty"`
}

// FabricHardware is the network fabric between clients and servers.
type FabricHardware struct {
	// bisectionBitsPerSecond is the fabric's bisection bandwidth as a data rate (no encoding
	// is applied to it). Empty: non-blocking (min of the client and server sides).
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="fabric bisectionBitsPerSecond must be greater than zero"
	// +kubebuilder:validation:XValidation:rule="!quantity(string(self)).isGreaterThan(quantity('1E'))",message="fabric bisectionBitsPerSecond must be at most 1E (1 Ebit/s)"
	// +optional
	BisectionBitsPerSecond *resource.Quantity `json:"bisectionBitsPerSecond,omitempty"`

	// serviceTrafficBitsPerSecond is traffic that shares the transport network (metadata,
	// locks, monitoring) and is subtracted from it.
	// +kubebuilder:validation:XValidation:rule="!quantity(string(self)).isLessThan(quantity('0'))",message="fabric serviceTrafficBitsPerSecond must not be negative"
	// +kubebuilder:validation:XValidation:rule="!quantity(string(self)).isGreaterThan(quantity('1E'))",message="fabric serviceTrafficBitsPerSecond must be at most 1E (1 Ebit/s)"
	// +optional
	ServiceTrafficBitsPerSecond *resource.Quantity `json:"serviceTrafficBitsPerSecond,omitempty"`
}

// DevicesHardware is the storage devices of each server node.
type DevicesHardware struct {
	// perNode is the number of devices per node.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +kubebuilder:default=1
	// +optional
	PerNode int32 `json:"perNode,omitempty"`

	// writeBytesPerSecond is one device's sequential write bandwidth, e.g. "3G".
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="devices writeBytesPerSecond must be greater than zero"
	// +kubebuilder:validation:XValidation:rule="!quantity(string(self)).isGreaterThan(quantity('1T'))",message="devices writeBytesPerSecond must be at most 1T (1 TB/s per device)"
	// +optional
	WriteBytesPerSecond *resource.Quantity `json:"writeBytesPerSecond,omitempty"`

	// readBytesPerSecond is one device's sequential read bandwidth, e.g. "6G".
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="devices readBytesPerSecond must be greater than zero"
	// +kubebuilder:validation:XValidation:rule="!quantity(string(self)).isGreaterThan(quantity('1T'))",message="devices readBytesPerSecond must be at most 1T (1 TB/s per device)"
	// +optional
	ReadBytesPerSecond *resource.Quantity `json:"readBytesPerSecond,omitempty"`
}

// NodeHardware is one node's hardware: the documented link rate stage 1 uses for the node and
// where it came from, and what the stage-2 device probe read from the node's sysfs. Device
// model and capacity are informational; the device's bandwidth is measured by the same probe
// (status.limits.components).
type NodeHardware struct {
	// linkBitsPerSecond is the node's link rate that stage 1 uses: a signalling rate from spec
	// or label (their encoding applies), or the data rate the kernel reports. Absent: unknown.
	// +optional
	LinkBitsPerSecond *resource.Quantity `json:"linkBitsPerSecond,omitempty"`
	// linkSource says where linkBitsPerSecond came from, the first that gives it: spec
	// (spec.hardware), label (hardware.beeburst.io/link-rate-bits-per-second on the node),
	// discovered (interfaceBitsPerSecond), else unknown.
	// +optional
	LinkSource string `json:"linkSource,omitempty"`
	// interface is the network interface that carries the node's InternalIP. Discovered only
	// where neither spec nor label documents the link: reading it needs the host network.
	// +optional
	Interface string `json:"interface,omitempty"`
	// interfaceBitsPerSecond is the speed the kernel reports for interface
	// (/sys/class/net/<interface>/speed). Absent when it reports none, or for a virtual
	// interface such as a veth, whose speed is a constant of its driver, not a link's.
	// +optional
	InterfaceBitsPerSecond *resource.Quantity `json:"interfaceBitsPerSecond,omitempty"`
	// device is the block device that holds spec.storage.path, e.g. nvme0n1p2.
	// +optional
	Device string `json:"device,omitempty"`
	// deviceModel is the model the kernel reports for the device (for a partition, its disk;
	// below device-mapper or md, the disks'), e.g. "Samsung SSD 980 PRO 1TB"; "loop" for a
	// loop device. Absent when the kernel reports none (virtio disks, for example).
	// +optional
	DeviceModel string `json:"deviceModel,omitempty"`
	// backingFile is a loop device's backing file.
	// +optional
	BackingFile string `json:"backingFile,omitempty"`
	// capacity is the size of the file system at spec.storage.path.
	// +optional
	Capacity *resource.Quantity `json:"capacity,omitempty"`
	// notes say what could not be discovered, and why.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Notes []string `json:"notes,omitempty"`
}
