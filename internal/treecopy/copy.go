// Package treecopy copies data between a burst buffer and durable storage (stage-in and
// stage-out). It is plain file-system code, run by the agent inside one pod per node; it
// knows nothing of Kubernetes.
//
// The rules make a copy safe to run in parallel on several nodes into one destination and
// safe to run again after a failure:
//   - a file appears at its destination complete or not at all: it is written to a temporary
//     name in the same directory, synced, then hard-linked to its name, which fails if the
//     name exists (no writer ever replaces another's file);
//   - a destination file that already exists is never overwritten: identical content (same
//     size and SHA-256) counts as already copied, anything else is a conflict and fails the
//     copy, naming the file. Nothing is deleted silently;
//   - with sharding, each of Of copiers takes the files whose path hashes to its Shard, so a
//     shared file system is copied once, in parallel.
package treecopy

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Pair is one copy: the tree below From goes below To.
type Pair struct {
	From, To string
}

// Options of a copy.
type Options struct {
	Pairs []Pair
	// Shard and Of split the files between Of copiers (0 <= Shard < Of); Of <= 1 copies all.
	Shard, Of int
	// MissingSourceOK makes a missing From an empty copy instead of an error. Stage-out sets
	// it: with node-local scratch, a node the job did not write on has no results directory.
	MissingSourceOK bool
	// Progress, when set, is called about every ProgressInterval with the running totals.
	Progress         func(Totals)
	ProgressInterval time.Duration
}

// Totals are the figures of a copy.
type Totals struct {
	// Files and Bytes were copied by this run.
	Files int64 `json:"files"`
	Bytes int64 `json:"bytes"`
	// SkippedFiles and SkippedBytes were already at the destination with the same content
	// (an earlier, interrupted run), so they were not copied again.
	SkippedFiles int64 `json:"skippedFiles,omitempty"`
	SkippedBytes int64 `json:"skippedBytes,omitempty"`
	// Dirs and Symlinks created; Ignored are entries that are neither files, directories nor
	// symlinks (sockets, devices, FIFOs).
	Dirs     int64 `json:"dirs,omitempty"`
	Symlinks int64 `json:"symlinks,omitempty"`
	Ignored  int64 `json:"ignored,omitempty"`
	// MissingSources are From paths that did not exist (MissingSourceOK).
	MissingSources []string `json:"missingSources,omitempty"`
	Seconds        float64  `json:"seconds"`
}

// ProgressPrefix starts the progress lines the agent prints to its log, followed by the
// Totals as JSON; the operator reads the last one into the status while a copy runs.
const ProgressPrefix = "agent: progress "

// ConflictError says a destination file exists with other content.
type ConflictError struct{ Path string }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s already exists with different content; it was not overwritten (stage to an empty directory, or remove it)", e.Path)
}

// tmpMarker is in the name of every temporary file, so that leftovers of a killed copy are
// recognisable (and never copied themselves).
const tmpMarker = ".beeburst-tmp-"

// Add adds o's figures to t (the pairs of one run copied by different copiers); Seconds are
// left alone, the caller measures the whole run.
func (t *Totals) Add(o Totals) {
	t.Files += o.Files
	t.Bytes += o.Bytes
	t.SkippedFiles += o.SkippedFiles
	t.SkippedBytes += o.SkippedBytes
	t.Dirs += o.Dirs
	t.Symlinks += o.Symlinks
	t.Ignored += o.Ignored
	t.MissingSources = append(t.MissingSources, o.MissingSources...)
}

// Meter keeps the running totals of a copy and reports them about every interval (the
// progress lines); other copiers (internal/objcopy) use it too.
type Meter struct {
	T        Totals
	start    time.Time
	lastTick time.Time
	progress func(Totals)
	interval time.Duration
}

// NewMeter starts the clock; progress may be nil, interval 0 is 2 s.
func NewMeter(progress func(Totals), interval time.Duration) *Meter {
	if interval == 0 {
		interval = 2 * time.Second
	}
	return &Meter{start: time.Now(), progress: progress, interval: interval}
}

// Tick reports the totals if the interval has passed since the last report.
func (m *Meter) Tick() {
	if m.progress == nil {
		return
	}
	if now := time.Now(); now.Sub(m.lastTick) >= m.interval {
		m.lastTick = now
		t := m.T
		t.Seconds = now.Sub(m.start).Seconds()
		m.progress(t)
	}
}

// Done is the final totals, with the time since NewMeter.
func (m *Meter) Done() Totals {
	m.T.Seconds = time.Since(m.start).Seconds()
	return m.T
}

// Copy runs the pairs in order and returns the totals so far, also on error.
func Copy(ctx context.Context, o Options) (Totals, error) {
	c := &copier{o: o, m: NewMeter(o.Progress, o.ProgressInterval), buf: make([]byte, 1<<20)}
	c.t = &c.m.T
	if err := CheckShard(o.Shard, o.Of); err != nil {
		return c.m.Done(), err
	}
	var err error
	for _, p := range o.Pairs {
		if err = c.pair(ctx, p); err != nil {
			break
		}
	}
	return c.m.Done(), err
}

// CheckShard validates a shard of of copiers.
func CheckShard(shard, of int) error {
	if of > 1 && (shard < 0 || shard >= of) {
		return fmt.Errorf("shard %d is not in [0, %d)", shard, of)
	}
	return nil
}

type copier struct {
	o   Options
	m   *Meter
	t   *Totals // &m.T
	buf []byte
}

func (c *copier) pair(ctx context.Context, p Pair) error {
	st, err := os.Stat(p.From)
	switch {
	case errors.Is(err, fs.ErrNotExist) && c.o.MissingSourceOK:
		c.t.MissingSources = append(c.t.MissingSources, p.From)
		return nil
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s is not a directory", p.From)
	}
	// The destination's parents (a nested path on a claim) are plain directories; the
	// destination itself is created from the source's mode below.
	if err := os.MkdirAll(filepath.Dir(p.To), 0o755); err != nil {
		return err
	}
	return filepath.WalkDir(p.From, func(src string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(p.From, src)
		if err != nil {
			return err
		}
		dst := filepath.Join(p.To, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return c.dir(src, dst, info)
		case IsTemp(d.Name()):
			return nil
		case !InShard(rel, c.o.Shard, c.o.Of):
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			return c.symlink(src, dst)
		case d.Type().IsRegular():
			return c.file(src, dst, info)
		default:
			c.t.Ignored++
			return nil
		}
	})
}

// InShard says whether copier shard of of takes the file at rel (its path below the pair's
// root, slash-separated). Every copier of a tree, file system or object store, uses this
// hash, so the shards of one copy partition it whatever the medium.
func InShard(rel string, shard, of int) bool {
	if of <= 1 {
		return true
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(filepath.ToSlash(rel)))
	return int(h.Sum32()%uint32(of)) == shard
}

// dir makes the directory (every shard does: it is idempotent and a shard may have no file
// in it) with the source's mode and owner.
func (c *copier) dir(src, dst string, info fs.FileInfo) error {
	err := os.Mkdir(dst, info.Mode().Perm()|0o700)
	switch {
	case errors.Is(err, fs.ErrExist):
		if st, serr := os.Stat(dst); serr != nil || !st.IsDir() {
			return fmt.Errorf("%s exists and is not a directory", dst)
		}
		return nil
	case err != nil:
		return err
	}
	c.t.Dirs++
	// MkdirAll-style parents are not needed: WalkDir visits parents first.
	chown(dst, info)
	return os.Chmod(dst, info.Mode().Perm()|info.Mode()&(fs.ModeSticky|fs.ModeSetgid))
}

func (c *copier) symlink(src, dst string) error {
	target, err := os.Readlink(src)
	if err != nil {
		return err
	}
	if err := os.Symlink(target, dst); err != nil {
		if errors.Is(err, fs.ErrExist) {
			if cur, rerr := os.Readlink(dst); rerr == nil && cur == target {
				c.t.SkippedFiles++
				return nil
			}
			return &ConflictError{Path: dst}
		}
		return err
	}
	c.t.Symlinks++
	return nil
}

func (c *copier) file(src, dst string, info fs.FileInfo) error {
	if _, err := os.Lstat(dst); err == nil {
		return c.existing(src, dst, info)
	}
	tmp, err := c.writeTemp(src, dst, info)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, dst); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Another copier (another node's stage-out) won the name.
			return c.existing(src, dst, info)
		}
		return err
	}
	c.t.Files++
	c.t.Bytes += info.Size()
	c.m.Tick()
	return nil
}

// existing decides about a destination that is already there: same content is a file
// already copied; anything else is a conflict.
func (c *copier) existing(src, dst string, info fs.FileInfo) error {
	same, err := SameContent(src, dst, info.Size())
	if err != nil {
		return err
	}
	if !same {
		return &ConflictError{Path: dst}
	}
	c.t.SkippedFiles++
	c.t.SkippedBytes += info.Size()
	c.m.Tick()
	return nil
}

// writeTemp copies src into a new temporary file next to dst, synced, with src's mode,
// owner and modification time, and returns its name.
func (c *copier) writeTemp(src, dst string, info fs.FileInfo) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := CreateTemp(dst)
	if err != nil {
		return "", err
	}
	tmp := out.Name()
	fail := func(err error) (string, error) {
		out.Close()
		os.Remove(tmp)
		return "", err
	}
	n, err := io.CopyBuffer(out, in, c.buf)
	if err != nil {
		return fail(fmt.Errorf("copying %s: %w", src, err))
	}
	if n != info.Size() {
		return fail(fmt.Errorf("copying %s: read %d bytes, the file has %d (changed during the copy?)", src, n, info.Size()))
	}
	if err := out.Sync(); err != nil {
		return fail(err)
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return "", err
	}
	chown(tmp, info)
	if err := os.Chmod(tmp, info.Mode().Perm()); err != nil {
		os.Remove(tmp)
		return "", err
	}
	_ = os.Chtimes(tmp, info.ModTime(), info.ModTime())
	return tmp, nil
}

// CreateTemp creates a new temporary file (mode 0600) in dst's directory, named so that
// leftovers of a killed copy are recognisable and never copied themselves. The caller links
// it to dst once complete and synced (os.Link fails if dst exists: nothing is replaced).
func CreateTemp(dst string) (*os.File, error) {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+tmpMarker+hex.EncodeToString(rnd[:]))
	return os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
}

// IsTemp says whether a name is one of CreateTemp's.
func IsTemp(name string) bool { return strings.Contains(name, tmpMarker) }

// chown keeps the owner, so that a job running as a non-root uid can write into what was
// staged in for it. It is best effort: without CAP_CHOWN (a rootless test) files stay the
// copier's.
func chown(path string, info fs.FileInfo) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		_ = os.Lchown(path, int(st.Uid), int(st.Gid))
	}
}

// SameContent says whether file b has a's content (size, then SHA-256); false also when b
// is not a regular file.
func SameContent(a, b string, size int64) (bool, error) {
	st, err := os.Lstat(b)
	if err != nil {
		return false, err
	}
	if !st.Mode().IsRegular() || st.Size() != size {
		return false, nil
	}
	ha, err := Digest(a)
	if err != nil {
		return false, err
	}
	hb, err := Digest(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(ha, hb), nil
}

// Digest is the SHA-256 of a file.
func Digest(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}
