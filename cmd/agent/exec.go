package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/beeburst/beeburst/internal/bench"
)

// killGrace is how long a tool has to exit after SIGTERM before it is killed.
const killGrace = 10 * time.Second

// toolCmd prepares a tool in its own process group, so that cancelling stops the tool and
// everything it forked (fio's job processes): SIGTERM to the group, SIGKILL after killGrace.
func toolCmd(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = killGrace
	return cmd
}

// killGroup makes sure nothing of a finished tool's process group is left behind.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// runTool runs a tool to completion and returns its stdout. A cancelled or timed-out context
// is returned as ctx.Err(), so that the caller reports "cancelled" or the deadline.
func runTool(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := toolCmd(ctx, name, args...)
	var out bytes.Buffer
	errTail := &tailBuffer{max: 2048}
	cmd.Stdout, cmd.Stderr = &out, errTail
	logf("running %s %s", name, strings.Join(args, " "))
	err := cmd.Run()
	killGroup(cmd)
	if ctx.Err() != nil {
		return out.Bytes(), ctx.Err()
	}
	if err != nil {
		if tail := strings.TrimSpace(errTail.String()); tail != "" {
			return out.Bytes(), fmt.Errorf("%s failed: %v: %s", name, err, tail)
		}
		return out.Bytes(), fmt.Errorf("%s failed: %v", name, err) // killed, say: nothing on stderr
	}
	return out.Bytes(), nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// background is a long-running tool (iperf3 or fio server).
type background struct {
	cmd  *exec.Cmd
	done chan error
	tail *tailBuffer
}

func startBackground(ctx context.Context, name string, args ...string) (*background, error) {
	cmd := toolCmd(ctx, name, args...)
	b := &background{cmd: cmd, done: make(chan error, 1), tail: &tailBuffer{max: 2048}}
	cmd.Stdout, cmd.Stderr = b.tail, b.tail
	logf("starting %s %s", name, strings.Join(args, " "))
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { b.done <- cmd.Wait() }()
	return b, nil
}

// stop stops the tool (SIGTERM to its group, SIGKILL after killGrace) and waits for it.
func (b *background) stop() {
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(killGrace):
		killGroup(b.cmd)
		<-b.done
	}
	killGroup(b.cmd)
}

// waitListening waits until a TCP port is listening on this node (from /proc/net/tcp*, so
// that no connection disturbs a one-off iperf3 server) or the tool exits.
func waitListening(ctx context.Context, b *background, port int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if listening(port) {
			return nil
		}
		select {
		case err := <-b.done:
			b.done <- err
			return fmt.Errorf("%s exited before listening on port %d: %v: %s", filepath.Base(b.cmd.Path), port, err, strings.TrimSpace(b.tail.String()))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on port %d after %v", port, timeout)
		}
	}
}

func listening(port int) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) > 3 && strings.HasSuffix(fs[1], want) && fs[3] == "0A" {
				return true
			}
		}
	}
	return false
}

// detectTools says which benchmark tools this image or machine has.
func detectTools(ctx context.Context) bench.Tools {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	version := func(name string, args ...string) string {
		if _, err := exec.LookPath(name); err != nil {
			return ""
		}
		out, _ := exec.CommandContext(ctx, name, args...).CombinedOutput()
		line := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
		if line == "" {
			return "unknown"
		}
		return line
	}
	// At once: every run waits for this before it measures, so it costs the slowest tool's
	// start, not the sum of four.
	var t bench.Tools
	var wg sync.WaitGroup
	for _, v := range []struct {
		into *string
		name string
	}{{&t.Fio, "fio"}, {&t.Iperf3, "iperf3"}, {&t.IOR, "ior"}, {&t.Mdtest, "mdtest"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			*v.into = version(v.name, "--version")
		}()
	}
	wg.Wait()
	// "iperf 3.12 (cJSON 1.7.15)" -> "3.12"
	if f := strings.Fields(t.Iperf3); len(f) >= 2 && f[0] == "iperf" {
		t.Iperf3 = f[1]
	}
	for _, v := range []*string{&t.IOR, &t.Mdtest} {
		if len(*v) > 40 {
			*v = "present"
		}
	}
	return t
}

// freeBytes is the space available to unprivileged writers below dir.
func freeBytes(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// workDir is a new directory below dir for one run's files; cleanup removes it whatever
// happened.
func workDir(dir, name string) (string, func(), error) {
	st, err := os.Stat(dir)
	if err != nil {
		return "", nil, err
	}
	if !st.IsDir() {
		return "", nil, fmt.Errorf("%s is not a directory", dir)
	}
	wd, err := os.MkdirTemp(dir, ".beeburst-"+name+"-")
	if err != nil {
		return "", nil, err
	}
	return wd, func() {
		if err := os.RemoveAll(wd); err != nil {
			logf("cleanup of %s failed: %v", wd, err)
		}
		settle(dir) // the frees of the removed files, inside this run and not the next
	}, nil
}

// runFio runs one fio plan (job file written to jobDir) and parses its output. clients are
// fio servers (host or host:port) for client mode.
func runFio(ctx context.Context, jobDir string, plan bench.FioPlan, clients []string) (*bench.Parsed, error) {
	jf, err := os.CreateTemp(jobDir, "job-*.fio")
	if err != nil {
		return nil, err
	}
	defer os.Remove(jf.Name())
	if _, err := jf.WriteString(plan.JobFile()); err != nil {
		jf.Close()
		return nil, err
	}
	jf.Close()
	args := []string{"--output-format=json"}
	if len(clients) > 0 {
		hf, err := os.CreateTemp(jobDir, "hosts-*.list")
		if err != nil {
			return nil, err
		}
		defer os.Remove(hf.Name())
		for _, c := range clients {
			host, port := c, ""
			if i := strings.LastIndexByte(c, ':'); i > 0 && !strings.Contains(c[:i], ":") {
				host, port = c[:i], c[i+1:]
			}
			line := host
			if port != "" {
				line += "," + port
			}
			fmt.Fprintln(hf, line)
		}
		hf.Close()
		args = append(args, "--client="+hf.Name())
	}
	args = append(args, jf.Name())
	out, err := runTool(ctx, "fio", args...)
	if err != nil {
		return nil, err
	}
	p, err := bench.ParseFio(out)
	if err != nil {
		return nil, err
	}
	return p, nil
}

var errUsage = errors.New("usage")
