package parallel

import (
	"errors"
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
