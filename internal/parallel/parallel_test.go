package parallel

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Do runs every call, at most AtOnce at a time, and returns every error.
func TestDo(t *testing.T) {
	var running, most, calls atomic.Int32
	errOdd := errors.New("odd")
	err := Do(50, func(i int) error {
		calls.Add(1)
		n := running.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(2 * time.Millisecond)
		running.Add(-1)
		if i%2 == 1 {
			return errOdd
		}
		return nil
	})
	if calls.Load() != 50 {
		t.Errorf("%d calls, want 50", calls.Load())
	}
	if most.Load() > AtOnce || most.Load() < 2 {
		t.Errorf("at most %d at once, want 2..%d", most.Load(), AtOnce)
	}
	if !errors.Is(err, errOdd) {
		t.Errorf("error %v, want the calls' errors", err)
	}
	if err := Do(0, func(int) error { return errOdd }); err != nil {
		t.Errorf("no calls: %v", err)
	}
}

// A call that panics is an error of Do's, not the end of the process; the others run.
func TestDoRecoversPanic(t *testing.T) {
	var calls atomic.Int32
	err := Do(20, func(i int) error {
		calls.Add(1)
		if i == 7 {
			var p *struct{ name string }
			_ = p.name // a nil dereference, as a torn read would give
		}
		return nil
	})
	if calls.Load() != 20 {
		t.Errorf("%d calls, want 20", calls.Load())
	}
	if err == nil || !strings.Contains(err.Error(), "panic in write 8 of 20") || !strings.Contains(err.Error(), "nil pointer") {
		t.Errorf("error %v, want the panic of write 8", err)
	}
}
