package main

import (
	"strings"
	"testing"
)

// A value the plugin cannot read is named by its path from the manifest's root and said what
// it should be, whatever the file holds: a manifest, a bare hardware block, or one under
// "hardware:".
func TestEstimateNamesTheFieldOfABadValue(t *testing.T) {
	const manifest = "apiVersion: beeburst.io/v1alpha1\nkind: BurstBuffer\nmetadata: {name: x}\n"
	for _, c := range []struct{ file, want string }{
		{manifest + "spec:\n  hardware:\n    clients:\n      link: {rateBitsPerSecond: fast}\n",
			`spec.hardware.clients.link.rateBitsPerSecond: "fast" is not a quantity (e.g. 100G, 512Ki, 1.5Gi)`},
		{manifest + "spec: {hardware: {devices: {writeBytesPerSecond: 3 GB}}}\n",
			`spec.hardware.devices.writeBytesPerSecond: "3 GB" is not a quantity`},
		{manifest + "spec: {hardware: {fabric: {bisectionBitsPerSecond: [1]}}}\n",
			`spec.hardware.fabric.bisectionBitsPerSecond: a list is not a quantity`},
		{manifest + "spec: {nodes: {count: two}}\n", `spec.nodes.count: "two" is not an integer`},
		{manifest + "spec: {nodes: {count: 5000000000}}\n", `spec.nodes.count: 5000000000 is not an integer of 32 bits`},
		{manifest + "spec: {hardware: {colocated: maybe}}\n", `spec.hardware.colocated: "maybe" is not true or false`},
		{manifest + "spec: {hardware: {clients: {nodez: 2}}}\n", `spec.hardware.clients.nodez: unknown field; spec.hardware.clients has link, nodes, processesPerNode`},
		{manifest + "spec: {hardware: {servers: [1]}}\n", `spec.hardware.servers: a list is not an object with the fields`},
		{manifest + "metadata: {labels: [a]}\n", `metadata.labels: a list is not a mapping`},
		{"clients: {link: {rateBitsPerSecond: fast}}\n", `spec.hardware.clients.link.rateBitsPerSecond: "fast" is not a quantity`},
		{"hardware:\n  servers: {nodes: 1.5}\n", `spec.hardware.servers.nodes: 1.5 is not an integer of 32 bits`},
	} {
		code, _, errOut := runCLI(t, "", "estimate", "-f", writeFile(t, "bb.yaml", c.file))
		if code != exitInvalid || !strings.Contains(errOut, c.want) {
			t.Errorf("exit %d, %q\nwant it to say %q for:\n%s", code, errOut, c.want, c.file)
		}
		if strings.Contains(errOut, "regular expression") || strings.Contains(errOut, "Go struct field") {
			t.Errorf("the decoder's words reach the user: %q", errOut)
		}
	}
}
