package nodetask

import (
	"strings"
	"testing"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/agentapi"
)

// InChain gives a pod its chain flags and the storage path's mount the markers live on, once:
// a device probe has the mount already, a network probe gets it.
func TestInChain(t *testing.T) {
	bb := testBB(v1alpha1.EngineLocal, v1alpha1.ProfileQuick)
	bb.UID = "0c8e"
	dev := DeviceProbePod(bb, "agent:1", 0, "n0", "", 1)
	srv := NetServerPod(bb, "agent:1", 0, "n0")
	InChain(bb, dev, agentapi.Chain{StartWith: []string{dev.Name, srv.Name}, HoldFor: []string{srv.Name}})
	InChain(bb, srv, agentapi.Chain{After: []string{dev.Name}})

	dir := HostMount + "/beeburst/.chain." + bb.Namespace + "." + bb.Name + "/0c8e"
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"device probe", dev.Spec.Containers[0].Args, "--chain-dir " + dir + " --chain-name " + dev.Name + " --chain-start-with " + dev.Name + "," + srv.Name + " --chain-hold-for " + srv.Name},
		{"network server", srv.Spec.Containers[0].Args, "--chain-dir " + dir + " --chain-name " + srv.Name + " --chain-after " + dev.Name},
	} {
		if got := strings.Join(c.args, " "); !strings.HasSuffix(got, c.want) {
			t.Errorf("%s: args %q do not end with %q", c.name, got, c.want)
		}
	}
	for _, p := range []struct {
		name    string
		volumes int
	}{{dev.Name, len(dev.Spec.Volumes)}, {srv.Name, len(srv.Spec.Volumes)}} {
		if p.volumes != 1 {
			t.Errorf("%s: %d volumes, want the storage path's alone", p.name, p.volumes)
		}
	}
	if m := srv.Spec.Containers[0].VolumeMounts; len(m) != 1 || m[0].MountPath != HostMount {
		t.Errorf("network server mounts %+v, want the storage path at %s", srv.Spec.Containers[0].VolumeMounts, HostMount)
	}
	if srv.Spec.Volumes[0].HostPath.Path != bb.Spec.Storage.Path {
		t.Errorf("network server's volume %+v, want the storage path", srv.Spec.Volumes[0])
	}
}
