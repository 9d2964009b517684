package main

import (
	"os"
	"testing"
)

func TestContainerMemoryLimit(t *testing.T) {
	files := func(m map[string]string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			if v, ok := m[p]; ok {
				return []byte(v), nil
			}
			return nil, os.ErrNotExist
		}
	}
	for _, c := range []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"v2 limit", map[string]string{"/sys/fs/cgroup/memory.max": "536870912\n"}, 512 << 20},
		{"v2 none", map[string]string{"/sys/fs/cgroup/memory.max": "max\n"}, 0},
		{"v1 limit", map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "268435456\n"}, 256 << 20},
		{"v1 none", map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, 0},
		{"no cgroup files", nil, 0},
		{"unreadable", map[string]string{"/sys/fs/cgroup/memory.max": "lots"}, 0},
	} {
		if got := containerMemoryLimit(files(c.files)); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// GOMEMLIMIT given: the runtime's own reading of it stands.
func TestGoMemoryLimitLeavesGOMEMLIMIT(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "100MiB")
	if got := setGoMemoryLimit(); got != 0 {
		t.Errorf("set %d with GOMEMLIMIT given", got)
	}
}
