package treecopy

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// tree writes files (relative path -> content) below dir.
func tree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
	}
}

// read returns every regular file below dir (relative path -> content).
func read(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		got[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestCopyTreeKeepsModesTimesAndSymlinks(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "nested", "out")
	files := map[string]string{"a.txt": "alpha", "d/b.bin": strings.Repeat("b", 3<<20), "d/e/c": "", "empty/.keep": "x"}
	tree(t, src, files)
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(src, "a.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	tot, err := Copy(context.Background(), Options{Pairs: []Pair{{From: src, To: dst}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, dst); !equal(got, files) {
		t.Fatalf("copied tree differs: %v", keys(got))
	}
	if tot.Files != 4 || tot.Bytes != 5+3<<20+1 || tot.Symlinks != 1 {
		t.Errorf("totals = %+v, want 4 files, %d bytes, 1 symlink", tot, 5+3<<20+1)
	}
	st, err := os.Stat(filepath.Join(dst, "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o640 || !st.ModTime().Equal(old) {
		t.Errorf("a.txt: mode %v mtime %v, want 0640 and %v", st.Mode().Perm(), st.ModTime(), old)
	}
	if target, err := os.Readlink(filepath.Join(dst, "link")); err != nil || target != "a.txt" {
		t.Errorf("link -> %q (%v), want a.txt", target, err)
	}
	assertNoTemp(t, dst)
}

// A second run over the same destination (a retry after a failure) copies nothing and fails
// nothing: identical files count as skipped.
func TestCopyAgainSkipsIdenticalFiles(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	tree(t, src, map[string]string{"x": "1", "y/z": "22"})
	o := Options{Pairs: []Pair{{From: src, To: dst}}}
	if _, err := Copy(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	tot, err := Copy(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if tot.Files != 0 || tot.SkippedFiles != 2 || tot.SkippedBytes != 3 {
		t.Errorf("second run = %+v, want 0 copied, 2 skipped (3 bytes)", tot)
	}
}

// A destination file with other content is never overwritten: the copy fails naming it.
func TestCopyConflictNeverOverwrites(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	tree(t, src, map[string]string{"r/out": "new"})
	tree(t, dst, map[string]string{"r/out": "old results"})
	_, err := Copy(context.Background(), Options{Pairs: []Pair{{From: src, To: dst}}})
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Path != filepath.Join(dst, "r/out") {
		t.Fatalf("err = %v, want a ConflictError naming r/out", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "r/out")); string(b) != "old results" {
		t.Errorf("destination overwritten: %q", b)
	}
	assertNoTemp(t, dst)
}

func TestCopyMissingSource(t *testing.T) {
	dst := t.TempDir()
	missing := filepath.Join(t.TempDir(), "results")
	if _, err := Copy(context.Background(), Options{Pairs: []Pair{{From: missing, To: dst}}}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stage-in of a missing source: err = %v, want not exist", err)
	}
	tot, err := Copy(context.Background(), Options{Pairs: []Pair{{From: missing, To: dst}}, MissingSourceOK: true})
	if err != nil || len(tot.MissingSources) != 1 || tot.Files != 0 {
		t.Errorf("stage-out of a missing source = %+v, %v; want an empty copy that names it", tot, err)
	}
}

// Shards split the files exactly: every file is copied by one shard, and together they copy
// the whole tree.
func TestCopyShardsPartitionTheFiles(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	files := map[string]string{}
	for i := 0; i < 200; i++ {
		files[filepath.Join("d"+string(rune('a'+i%5)), "f"+string(rune('A'+i%26))+strings.Repeat("x", i%7))] = strings.Repeat("y", i)
	}
	tree(t, src, files)
	const of = 3
	var sum int64
	for shard := 0; shard < of; shard++ {
		tot, err := Copy(context.Background(), Options{Pairs: []Pair{{From: src, To: dst}}, Shard: shard, Of: of})
		if err != nil {
			t.Fatal(err)
		}
		if tot.SkippedFiles != 0 {
			t.Errorf("shard %d skipped %d files: shards overlap", shard, tot.SkippedFiles)
		}
		if tot.Files == 0 {
			t.Errorf("shard %d copied nothing", shard)
		}
		sum += tot.Files
	}
	if got := read(t, dst); !equal(got, files) || sum != int64(len(files)) {
		t.Errorf("shards copied %d of %d files", sum, len(files))
	}
	if _, err := Copy(context.Background(), Options{Shard: 3, Of: 3}); err == nil {
		t.Error("shard 3 of 3 accepted")
	}
}

// Several copiers into one destination at once (stage-out of node-local scratch from every
// node): identical files are copied once, and a path with different content on two sources
// is a conflict, whoever wins the race.
func TestCopyConcurrentCopiersIntoOneDestination(t *testing.T) {
	dst := t.TempDir()
	big := make([]byte, 4<<20)
	_, _ = rand.Read(big)
	srcs := make([]string, 4)
	for i := range srcs {
		srcs[i] = t.TempDir()
		tree(t, srcs[i], map[string]string{"shared/input.bin": string(big), "out/node" + string(rune('0'+i)): "result"})
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var copied, skipped int64
	for _, s := range srcs {
		wg.Add(1)
		go func(s string) {
			defer wg.Done()
			tot, err := Copy(context.Background(), Options{Pairs: []Pair{{From: s, To: dst}}})
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			copied += tot.Files
			skipped += tot.SkippedFiles
			mu.Unlock()
		}(s)
	}
	wg.Wait()
	if copied != 5 || skipped != 3 {
		t.Errorf("copied %d, skipped %d; want 5 (1 shared + 4 results) and 3", copied, skipped)
	}
	assertNoTemp(t, dst)

	other := t.TempDir()
	tree(t, other, map[string]string{"shared/input.bin": "not the same"})
	var ce *ConflictError
	if _, err := Copy(context.Background(), Options{Pairs: []Pair{{From: other, To: dst}}}); !errors.As(err, &ce) {
		t.Errorf("err = %v, want a conflict", err)
	}
}

func TestCopyCancelled(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	tree(t, src, map[string]string{"a": "1", "b": "2"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Copy(ctx, Options{Pairs: []Pair{{From: src, To: dst}}}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestCopyReportsProgress(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	tree(t, src, map[string]string{"a": "1", "b": "22", "c": "333"})
	var seen []Totals
	_, err := Copy(context.Background(), Options{Pairs: []Pair{{From: src, To: dst}},
		Progress: func(t Totals) { seen = append(seen, t) }, ProgressInterval: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 || seen[2].Files != 3 || seen[2].Bytes != 6 {
		t.Errorf("progress = %+v, want 3 ticks ending at 3 files, 6 bytes", seen)
	}
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), tmpMarker) {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

func keys(m map[string]string) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}
