package objcopy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/beeburst/beeburst/internal/s3url"
	"github.com/beeburst/beeburst/internal/treecopy"
)

// The copies run against a real server of the S3 protocol in the test process: gofakes3
// with its in-memory backend, which honours If-None-Match on PUT like AWS S3 and MinIO.

type store struct {
	t       *testing.T
	backend *s3mem.Backend
	client  *minio.Client
	url     string
	// beforePut, when set, runs before the server handles a PUT of an object: a racing
	// writer.
	beforePut func(key string)
}

const bucket = "results"

func newStore(t *testing.T) *store {
	t.Helper()
	s := &store{t: t, backend: s3mem.New()}
	faker := gofakes3.New(s.backend)
	h := faker.Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && s.beforePut != nil {
			s.beforePut(strings.TrimPrefix(r.URL.Path, "/"+bucket+"/"))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	if err := s.backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	creds, err := Credentials(context.Background(), s3url.Location{}, env(map[string]string{EnvAccessKeyID: "id", EnvSecretAccessKey: "secret"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.client, err = NewClient(s3url.Location{Endpoint: srv.URL, Region: "us-east-1"}, creds)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// put stores an object directly in the backend (as another tool would: no sha256 metadata).
func (s *store) put(key, content string) {
	s.t.Helper()
	meta := map[string]string{"Last-Modified": time.Now().UTC().Format(http.TimeFormat)}
	if _, err := s.backend.PutObject(bucket, key, meta, strings.NewReader(content), int64(len(content)), nil); err != nil {
		s.t.Fatal(err)
	}
}

func (s *store) get(key string) string {
	s.t.Helper()
	o, err := s.backend.GetObject(bucket, key, nil)
	if err != nil {
		s.t.Fatalf("%s: %v", key, err)
	}
	defer o.Contents.Close()
	b, _ := io.ReadAll(o.Contents)
	return string(b)
}

func (s *store) keys() []string {
	s.t.Helper()
	var keys []string
	for o := range s.client.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			s.t.Fatal(o.Err)
		}
		keys = append(keys, o.Key)
	}
	sort.Strings(keys)
	return keys
}

func (s *store) copy(d Direction, prefix, dir string, mod func(*Options)) (treecopy.Totals, error) {
	o := Options{Client: s.client, Location: s3url.Location{Bucket: bucket, Prefix: prefix}, Dir: dir, Direction: d}
	if mod != nil {
		mod(&o)
	}
	return Copy(context.Background(), o)
}

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func files(t *testing.T, root string) []string {
	t.Helper()
	var names []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(names)
	return names
}

func TestDownload(t *testing.T) {
	s := newStore(t)
	s.put("run-7/a.txt", "alpha")
	s.put("run-7/sub/b.bin", "bravo!")
	s.put("run-7/sub/", "")         // a directory marker some tools write
	s.put("run-70/other.txt", "no") // a neighbour prefix: not ours
	dst := filepath.Join(t.TempDir(), "input")

	tot, err := s.copy(Download, "run-7", dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := files(t, dst); strings.Join(got, ",") != "a.txt,sub/b.bin" {
		t.Fatalf("files %v", got)
	}
	if read(t, filepath.Join(dst, "sub/b.bin")) != "bravo!" {
		t.Fatal("content differs")
	}
	if tot.Files != 2 || tot.Bytes != 11 {
		t.Fatalf("totals %+v", tot)
	}
	// The whole bucket, too.
	if tot, err := s.copy(Download, "", t.TempDir(), nil); err != nil || tot.Files != 3 {
		t.Fatalf("whole bucket: %+v %v", tot, err)
	}
}

func TestDownloadEmptyPrefix(t *testing.T) {
	s := newStore(t)
	_, err := s.copy(Download, "nothing", t.TempDir(), nil)
	if err == nil || !strings.Contains(err.Error(), "s3://results/nothing holds no objects") {
		t.Fatalf("err %v", err)
	}
	tot, err := s.copy(Download, "nothing", t.TempDir(), func(o *Options) { o.MissingSourceOK = true })
	if err != nil || len(tot.MissingSources) != 1 {
		t.Fatalf("%+v %v", tot, err)
	}
}

func TestUpload(t *testing.T) {
	s := newStore(t)
	src := t.TempDir()
	write(t, src, map[string]string{"a.txt": "alpha", "sub/deep/b.bin": "bravo!", ".x" + ".beeburst-tmp-0123": "leftover"})
	if err := os.Symlink("a.txt", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	tot, err := s.copy(Upload, "run-7/out", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.keys(); strings.Join(got, ",") != "run-7/out/a.txt,run-7/out/sub/deep/b.bin" {
		t.Fatalf("keys %v", got)
	}
	if s.get("run-7/out/sub/deep/b.bin") != "bravo!" {
		t.Fatal("content differs")
	}
	if tot.Files != 2 || tot.Bytes != 11 || tot.Ignored != 1 {
		t.Fatalf("totals %+v", tot)
	}
	info, err := s.client.StatObject(context.Background(), bucket, "run-7/out/a.txt", minio.StatObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := storedDigest(info); !ok || len(d) != 32 {
		t.Fatalf("no sha256 metadata: %v", info.UserMetadata)
	}
	// A node the job did not write on.
	tot, err = s.copy(Upload, "run-7/out", filepath.Join(src, "missing"), func(o *Options) { o.MissingSourceOK = true })
	if err != nil || len(tot.MissingSources) != 1 {
		t.Fatalf("%+v %v", tot, err)
	}
	if _, err := s.copy(Upload, "run-7/out", filepath.Join(src, "missing"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing source without MissingSourceOK: %v", err)
	}
}

func TestShardsPartitionKeys(t *testing.T) {
	s := newStore(t)
	src := t.TempDir()
	all := map[string]string{}
	for i := range 40 {
		all[filepath.Join("d", string(rune('a'+i%7)), strings.Repeat("f", 1+i%5)+string(rune('0'+i%10))+".dat")] = strings.Repeat("x", i)
	}
	write(t, src, all)
	const of = 3
	var uploaded int64
	for shard := range of {
		tot, err := s.copy(Upload, "p", src, func(o *Options) { o.Shard, o.Of = shard, of })
		if err != nil {
			t.Fatal(err)
		}
		if tot.Files == 0 || tot.SkippedFiles != 0 {
			t.Fatalf("shard %d: %+v (each shard takes its own keys, none twice)", shard, tot)
		}
		uploaded += tot.Files
	}
	if uploaded != int64(len(all)) || len(s.keys()) != len(all) {
		t.Fatalf("uploaded %d keys %d, want %d", uploaded, len(s.keys()), len(all))
	}
	// Download in shards: disjoint, and together everything.
	seen := map[string]int{}
	for shard := range of {
		dst := t.TempDir()
		if _, err := s.copy(Download, "p", dst, func(o *Options) { o.Shard, o.Of = shard, of }); err != nil {
			t.Fatal(err)
		}
		for _, f := range files(t, dst) {
			seen[f]++
			// The same partition as treecopy's, so mixed copies agree.
			if !treecopy.InShard(f, shard, of) {
				t.Fatalf("%s in shard %d", f, shard)
			}
		}
	}
	if len(seen) != len(all) {
		t.Fatalf("%d files downloaded, want %d", len(seen), len(all))
	}
	for f, n := range seen {
		if n != 1 {
			t.Fatalf("%s downloaded by %d shards", f, n)
		}
	}
	if _, err := s.copy(Upload, "p", src, func(o *Options) { o.Shard, o.Of = 3, 3 }); err == nil {
		t.Fatal("shard out of range accepted")
	}
}

func TestRetrySkipsIdentical(t *testing.T) {
	s := newStore(t)
	src := t.TempDir()
	write(t, src, map[string]string{"a": "one", "b/c": "three"})
	if _, err := s.copy(Upload, "r", src, nil); err != nil {
		t.Fatal(err)
	}
	write(t, src, map[string]string{"d": "new"})
	tot, err := s.copy(Upload, "r", src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tot.Files != 1 || tot.SkippedFiles != 2 || tot.SkippedBytes != 8 {
		t.Fatalf("upload retry %+v", tot)
	}
	// An object another tool wrote (no sha256 metadata) with the same content: compared by
	// content.
	s.put("r/e", "same")
	write(t, src, map[string]string{"e": "same"})
	if tot, err := s.copy(Upload, "r", src, nil); err != nil || tot.SkippedFiles != 4 {
		t.Fatalf("upload next to a foreign object: %+v %v", tot, err)
	}

	dst := t.TempDir()
	if _, err := s.copy(Download, "r", dst, nil); err != nil {
		t.Fatal(err)
	}
	tot, err = s.copy(Download, "r", dst, nil)
	if err != nil || tot.Files != 0 || tot.SkippedFiles != 4 {
		t.Fatalf("download retry %+v %v", tot, err)
	}
}

func TestConflictNeverOverwrites(t *testing.T) {
	s := newStore(t)
	src := t.TempDir()
	write(t, src, map[string]string{"a": "mine"})
	s.put("c/a", "theirs")
	_, err := s.copy(Upload, "c", src, nil)
	var ce *treecopy.ConflictError
	if !errors.As(err, &ce) || ce.Path != "s3://results/c/a" || !strings.Contains(err.Error(), "not overwritten") {
		t.Fatalf("err %v", err)
	}
	if s.get("c/a") != "theirs" {
		t.Fatal("object overwritten")
	}

	dst := t.TempDir()
	write(t, dst, map[string]string{"a": "local"})
	_, err = s.copy(Download, "c", dst, nil)
	if !errors.As(err, &ce) || ce.Path != filepath.Join(dst, "a") {
		t.Fatalf("err %v", err)
	}
	if read(t, filepath.Join(dst, "a")) != "local" {
		t.Fatal("file overwritten")
	}
}

// TestConditionalPut: another writer creates the key between the look and the PUT (two
// nodes staging out into one prefix). The server refuses the PUT (If-None-Match: *), and
// the copy decides as for any existing object: the same content is skipped, other content
// is a conflict, and the other writer's object stays.
func TestConditionalPut(t *testing.T) {
	for _, tc := range []struct {
		theirs   string
		conflict bool
	}{{"mine", false}, {"theirs", true}} {
		s := newStore(t)
		puts := 0
		s.beforePut = func(key string) {
			if key == "race/a" {
				puts++
				s.put(key, tc.theirs)
			}
		}
		src := t.TempDir()
		write(t, src, map[string]string{"a": "mine"})
		tot, err := s.copy(Upload, "race", src, nil)
		var ce *treecopy.ConflictError
		if tc.conflict != errors.As(err, &ce) || (!tc.conflict && (err != nil || tot.SkippedFiles != 1 || tot.Files != 0)) {
			t.Fatalf("theirs %q: %+v %v", tc.theirs, tot, err)
		}
		if puts != 1 || s.get("race/a") != tc.theirs {
			t.Fatalf("theirs %q: %d PUTs, object %q: the server must have refused ours", tc.theirs, puts, s.get("race/a"))
		}
	}
}

func TestCredentials(t *testing.T) {
	ctx := context.Background()
	l := s3url.Location{Bucket: "b", Prefix: "p", EnvPrefix: "S3_0_"}
	_, err := Credentials(ctx, l, env(nil), nil)
	if err == nil || !strings.Contains(err.Error(), "s3://b/p: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") {
		t.Fatalf("no credentials: %v", err)
	}
	_, err = Credentials(ctx, l, env(map[string]string{"S3_0_AWS_ACCESS_KEY_ID": "id"}), nil)
	if err == nil || !strings.Contains(err.Error(), "have AWS_ACCESS_KEY_ID but not AWS_SECRET_ACCESS_KEY") {
		t.Fatalf("half a key pair: %v", err)
	}
	// A fallback that finds nothing (no role) is the same clear error, not anonymous access.
	_, err = Credentials(ctx, l, env(nil), &credentials.Static{})
	if err == nil || !strings.Contains(err.Error(), "no credentials") {
		t.Fatalf("empty fallback: %v", err)
	}
	c, err := Credentials(ctx, l, env(map[string]string{"S3_0_AWS_ACCESS_KEY_ID": "id", "S3_0_AWS_SECRET_ACCESS_KEY": "s", "S3_0_AWS_SESSION_TOKEN": "tok"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := c.GetWithContext(nil)
	if v.AccessKeyID != "id" || v.SessionToken != "tok" {
		t.Fatalf("%+v", v)
	}
}
