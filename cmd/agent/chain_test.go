package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beeburst/beeburst/internal/bench"
)

// A run of a chain measures only after the runs it follows ended: here the predecessor's
// marker is written by the test 300 ms after the run started waiting.
func TestChainWaitsForItsPredecessor(t *testing.T) {
	markers := t.TempDir()
	data := filepath.Join(t.TempDir(), "beeburst", "ns.bb")
	go func() {
		time.Sleep(300 * time.Millisecond)
		if err := os.WriteFile(filepath.Join(markers, "devices.done"), nil, 0o644); err != nil {
			t.Error(err)
		}
	}()
	start := time.Now()
	code, r, _ := agent(t, "dir", "create", "--path", data, "--chain-dir", markers, "--chain-name", "links",
		"--chain-after", "devices", "-q")
	if code != exitOK || r.Phase != bench.PhaseSucceeded {
		t.Fatalf("exit %d phase %q message %q", code, r.Phase, r.Message)
	}
	if waited := r.StartTime.Sub(start); waited < 250*time.Millisecond {
		t.Errorf("the run started %v after the agent, before its predecessor ended", waited)
	}
	for _, m := range []string{"links.started", "links.done"} {
		if _, err := os.Stat(filepath.Join(markers, m)); err != nil {
			t.Errorf("marker %s: %v", m, err)
		}
	}
}

// A predecessor that never ends fails the run at its deadline, with the names it waited for;
// the run still marks itself done, so that the chain after it does not wait in turn.
func TestChainPredecessorThatNeverEnds(t *testing.T) {
	markers := t.TempDir()
	data := filepath.Join(t.TempDir(), "beeburst", "ns.bb")
	code, r, _ := agent(t, "dir", "create", "--path", data, "--chain-dir", markers, "--chain-name", "sweep-0",
		"--chain-after", "nets-0,netc-1", "--timeout", "300ms", "-q")
	if code != exitFailed || r.Phase != bench.PhaseFailed || !strings.Contains(r.Message, "[nets-0 netc-1] did not end") {
		t.Fatalf("exit %d phase %q message %q", code, r.Phase, r.Message)
	}
	if _, err := os.Stat(data); err == nil {
		t.Errorf("the run measured without its turn: %s exists", data)
	}
	if _, err := os.Stat(filepath.Join(markers, "sweep-0.done")); err != nil {
		t.Errorf("no done marker: %v", err)
	}
}

// The first run of a chain waits for the other runs' pods to start (their markers), not for
// them to end.
func TestChainStartsWithTheOthersStarted(t *testing.T) {
	markers := t.TempDir()
	data := filepath.Join(t.TempDir(), "beeburst", "ns.bb")
	for _, m := range []string{"links.started", "sweep-0.started"} {
		if err := os.WriteFile(filepath.Join(markers, m), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, r, _ := agent(t, "dir", "create", "--path", data, "--chain-dir", markers, "--chain-name", "devices",
		"--chain-start-with", "devices,links,sweep-0", "--timeout", "5s", "-q")
	if code != exitOK {
		t.Fatalf("exit %d phase %q message %q", code, r.Phase, r.Message)
	}
}

// A run that succeeded marks itself done at once, then holds its exit until the chain's last
// runs ended; a failed one exits at once.
func TestChainHoldsTheExitForTheLastRuns(t *testing.T) {
	markers := t.TempDir()
	data := filepath.Join(t.TempDir(), "beeburst", "ns.bb")
	doneSeen := make(chan bool, 1)
	go func() {
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(filepath.Join(markers, "devices.done")); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		_, err := os.Stat(filepath.Join(markers, "devices.done"))
		doneSeen <- err == nil
		time.Sleep(300 * time.Millisecond)
		_ = os.WriteFile(filepath.Join(markers, "sweep-1.done"), nil, 0o644)
	}()
	start := time.Now()
	code, r, _ := agent(t, "dir", "create", "--path", data, "--chain-dir", markers, "--chain-name", "devices",
		"--chain-hold-for", "sweep-1", "-q")
	if code != exitOK {
		t.Fatalf("exit %d phase %q message %q", code, r.Phase, r.Message)
	}
	if !<-doneSeen {
		t.Fatal("the run did not mark itself done before holding")
	}
	if held := time.Since(start); held < 300*time.Millisecond {
		t.Errorf("the run exited after %v, before the last run ended", held)
	}

	start = time.Now()
	code, _, _ = agent(t, "dir", "create", "--path", "/not/a/burst/buffer", "--chain-dir", markers, "--chain-name", "links",
		"--chain-hold-for", "never", "-q")
	if code != exitFailed {
		t.Fatalf("exit %d, want a failure", code)
	}
	if held := time.Since(start); held > 5*time.Second {
		t.Errorf("a failed run held its exit for %v", held)
	}
}

// TestMain lets the test binary run as the agent itself (BEEBURST_AGENT_MAIN=1): tests that
// need several agents at once, as several nodes run them, start it as separate processes.
func TestMain(m *testing.M) {
	if os.Getenv("BEEBURST_AGENT_MAIN") == "1" {
		os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// The runs of a point on a shared file system start together (--chain-shared): two agents,
// as two nodes run them, the second started 1.5 s after the first, measure at once - the
// first waits for the second's marker on the file system they share - and the last to end
// leaves no marker and no marker directory on it.
func TestSharedChainStartsAPointsRunsTogether(t *testing.T) {
	needTools(t, "fio")
	fs := t.TempDir()
	markers := filepath.Join(fs, ".beeburst-start", "sweep-0-0")
	type ran struct {
		rep   bench.Report
		start time.Time
		err   error
	}
	run := func(name, peer string, out chan<- ran) {
		start := time.Now()
		cmd := exec.Command(os.Args[0], "ideal", "--dir", fs, "--procs", "1", "--size", "16M", "--runtime", "1s", "-q",
			"--chain-dir", markers, "--chain-name", name, "--chain-start-with", peer, "--chain-shared")
		cmd.Env = append(os.Environ(), "BEEBURST_AGENT_MAIN=1")
		b, err := cmd.Output()
		r := ran{start: start, err: err}
		if err == nil {
			r.err = json.Unmarshal(b, &r.rep)
		}
		out <- r
	}
	first, second := make(chan ran, 1), make(chan ran, 1)
	go run("sweep-0-0", "sweep-0-1", first)
	time.Sleep(1500 * time.Millisecond)
	go run("sweep-0-1", "sweep-0-0", second)
	a, b := <-first, <-second
	if a.err != nil || b.err != nil {
		t.Fatalf("agents: %v, %v", a.err, b.err)
	}
	if waited := a.rep.StartTime.Sub(a.start); waited < time.Second {
		t.Errorf("the first run measured %v after its agent started, before the second's started", waited)
	}
	wa, wb := bench.Find(a.rep.Results, bench.OpWrite), bench.Find(b.rep.Results, bench.OpWrite)
	if wa == nil || wb == nil {
		t.Fatalf("no write results: %+v, %+v", a.rep, b.rep)
	}
	if apart := wa.End.Sub(wb.End).Abs(); apart > 500*time.Millisecond {
		t.Errorf("the writes ended %v apart (%s, %s): the runs did not run at once", apart, wa.End, wb.End)
	}
	if _, err := os.Stat(filepath.Dir(markers)); !os.IsNotExist(err) {
		t.Errorf("markers left on the file system: %v", err)
	}
}
