package beegfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// clientScriptIn runs ClientScript against a fake mount table and a fake mount(8) and
// umount(8) in dir: mount adds this burst buffer's line to the table, umount removes it.
func clientScriptIn(t *testing.T, dir string) (*exec.Cmd, string, string) {
	t.Helper()
	mounts, term := filepath.Join(dir, "mounts"), filepath.Join(dir, "termination-log")
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	stubs := map[string]string{
		// mount -t beegfs beegfs_nodev <dir> -ocfgFile=<conf>,_netdev
		"mount":  `o=${5#-ocfgFile=}; echo "beegfs_nodev $4 beegfs rw,cfgFile=${o%,_netdev} 0 0" >> "$MOUNTS"`,
		"umount": `grep -v " $2 beegfs " "$MOUNTS" > "$MOUNTS.new" || true; mv "$MOUNTS.new" "$MOUNTS"`,
		"dmesg":  `true`,
	}
	for name, body := range stubs {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(mounts, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	script := strings.NewReplacer("/proc/mounts", mounts, "/dev/termination-log", term, "sleep 5", "sleep 0.1", "/tmp/beegfs-client-", dir+"/beegfs-client-").Replace(ClientScript)
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "MOUNTS="+mounts, "CLIENT_CONF=x",
		"MOUNT_POINT="+filepath.Join(dir, "mnt"), "BB_UID=1234")
	return cmd, mounts, term
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func mounted(mounts string) func() bool {
	return func() bool {
		b, _ := os.ReadFile(mounts)
		return strings.Contains(string(b), " beegfs ")
	}
}

// A mount that goes away ends the client's container with its reason: the operator reads a
// lost mount from the container, not from a readiness probe.
func TestClientScriptEndsWhenTheMountIsLost(t *testing.T) {
	cmd, mounts, term := clientScriptIn(t, t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the mount", mounted(mounts))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("the client ended while mounted: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	if err := os.WriteFile(mounts, []byte("proc /proc proc rw 0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := <-done
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want 1", err)
	}
	b, _ := os.ReadFile(term)
	if !strings.HasPrefix(string(b), "mount lost: ") {
		t.Fatalf("termination message %q", b)
	}
}

// Stopped (SIGTERM), it unmounts and ends with 0.
func TestClientScriptUnmountsWhenStopped(t *testing.T) {
	cmd, mounts, _ := clientScriptIn(t, t.TempDir())
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the mount", mounted(mounts))
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v, want 0; output:\n%s", err, out.String())
	}
	if mounted(mounts)() {
		t.Fatal("still mounted")
	}
}

func TestGone(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }
	// running: the container started at started (after restarts); the Ready condition is
	// ready, and last changed at changed.
	running := func(restarts int32, started time.Duration, ready bool, changed time.Duration) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u"}, Status: corev1.PodStatus{Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{{RestartCount: restarts, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(started)}}}}}}
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: at(changed)}}
		if restarts > 0 {
			p.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Message: "mount lost: /run/beeburst/x", FinishedAt: at(started - time.Second)}
		}
		return p
	}
	waiting := running(1, 0, false, 0)
	waiting.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	terminated := running(0, 0, false, time.Hour)
	terminated.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Message: "killed"}}
	deleting := running(0, 0, true, time.Minute)
	deleting.DeletionTimestamp = ptr.To(at(time.Hour))
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		made bool
		want string // a part of the answer; "" for a component that runs
	}{
		{"ready", running(0, 0, true, time.Minute), false, ""},
		{"busy: not ready since after its container started", running(0, 0, false, time.Hour), false, ""},
		{"restarted long ago, busy now", running(2, 0, false, time.Hour), false, ""},
		{"restarted, not ready since (the crash)", running(1, time.Hour, false, time.Hour-time.Second), false, "restarted and is not ready again (it exited 1"},
		{"restarted within the second of the crash", running(1, time.Hour, false, time.Hour), false, "restarted and is not ready again"},
		{"restarted and ready again", running(1, time.Hour, true, time.Hour+time.Minute), false, ""},
		{"a new pod, not ready yet", running(0, time.Hour, false, time.Hour-2*time.Second), false, "started again and is not ready yet"},
		{"waiting to restart", waiting, false, "is not running (CrashLoopBackOff) (it exited 1"},
		{"exited", terminated, false, "exited 137: killed"},
		{"being deleted", deleting, false, "is being deleted"},
		{"deleted and made again", &corev1.Pod{}, true, "was deleted"},
		{"no kubelet word yet", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u"}, Status: corev1.PodStatus{Phase: corev1.PodPending}}, false, "is not running (Pending)"},
	} {
		got := gone(c.pod, c.made)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
