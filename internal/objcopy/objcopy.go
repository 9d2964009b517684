// Package objcopy copies data between a burst buffer and an object store of the S3 API (AWS
// S3, MinIO, Ceph RGW, ...): the stage-in and stage-out of a spec's s3 entries. Like
// internal/treecopy, whose rules it keeps, it is plain client code run by the agent and
// knows nothing of Kubernetes.
//
//   - stage-in lists the objects below the prefix and writes each to a temporary file next to
//     its destination, synced, then hard-linked to its name: a file appears complete or not at
//     all, and an existing file is never replaced (same content: skipped; other: conflict);
//   - stage-out uploads each file below the directory to prefix/path with a conditional PUT
//     (If-None-Match: *), so an existing object is never replaced either, also when several
//     nodes upload into one prefix at once. Each object carries its SHA-256 as metadata
//     (x-amz-meta-sha256), which tells a retry's identical object (skipped) from another's
//     (conflict). A server that ignores the condition is covered by a look before each PUT;
//     only there two writers racing for one key could replace each other;
//   - with sharding, each copier takes the keys whose path below the prefix hashes to its
//     shard, with treecopy's hash, so the shards partition a copy as they do on a file system.
package objcopy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/beeburst/beeburst/internal/s3url"
	"github.com/beeburst/beeburst/internal/treecopy"
)

// Credential variables, as in the AWS SDKs' environment chain.
const (
	EnvAccessKeyID     = "AWS_ACCESS_KEY_ID"
	EnvSecretAccessKey = "AWS_SECRET_ACCESS_KEY"
	EnvSessionToken    = "AWS_SESSION_TOKEN"
)

// Credentials are static keys from the environment (getenv, under l.EnvPrefix) when they are
// set, else fallback (the agent's: IRSA, an instance role). Half a key pair is a mistake in
// the Secret and says so; no credentials at all is an error too, rather than anonymous
// requests that fail later with a vaguer "access denied".
func Credentials(ctx context.Context, l s3url.Location, getenv func(string) string, fallback credentials.Provider) (*credentials.Credentials, error) {
	id, secret := getenv(l.EnvPrefix+EnvAccessKeyID), getenv(l.EnvPrefix+EnvSecretAccessKey)
	switch {
	case id != "" && secret != "":
		return credentials.NewStaticV4(id, secret, getenv(l.EnvPrefix+EnvSessionToken)), nil
	case id != "" || secret != "":
		return nil, fmt.Errorf("%s: the credentials have %s but not %s: the Secret needs both keys",
			l, map[bool]string{true: EnvAccessKeyID, false: EnvSecretAccessKey}[id != ""], map[bool]string{true: EnvSecretAccessKey, false: EnvAccessKeyID}[id != ""])
	}
	noneErr := fmt.Errorf("%s: no credentials: set %s and %s (the s3.credentialsSecret of the spec), or give the copy pods an IAM role", l, EnvAccessKeyID, EnvSecretAccessKey)
	if fallback == nil {
		return nil, noneErr
	}
	c := credentials.New(fallback)
	v, err := c.GetWithContext(&credentials.CredContext{Client: http.DefaultClient})
	if err != nil || v.SignerType == credentials.SignatureAnonymous || v.AccessKeyID == "" {
		if err != nil {
			return nil, fmt.Errorf("%w (%v)", noneErr, err)
		}
		return nil, noneErr
	}
	return c, nil
}

// NewClient is a client of l's server.
func NewClient(l s3url.Location, creds *credentials.Credentials) (*minio.Client, error) {
	host, secure := "s3.amazonaws.com", true
	if l.Endpoint != "" {
		u, err := url.Parse(l.Endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("endpoint %q is not an http(s) URL", l.Endpoint)
		}
		host, secure = u.Host, u.Scheme == "https"
	}
	// Three tries, not minio-go's ten: with its 30 s dial timeout an unreachable store fails
	// the copy (and says why in the status) within about two minutes instead of many.
	return minio.New(host, &minio.Options{Creds: creds, Secure: secure, Region: l.Region, MaxRetries: 3})
}

// Direction of a copy.
type Direction int

// Directions.
const (
	// Download: objects below the location into the directory (stage-in).
	Download Direction = iota
	// Upload: the directory's files below the location (stage-out).
	Upload
)

// Options of one copy between a location and a directory.
type Options struct {
	Client    *minio.Client
	Location  s3url.Location
	Dir       string
	Direction Direction
	// Shard, Of, MissingSourceOK, Progress and ProgressInterval as in treecopy.Options. A
	// missing source is a prefix without objects (Download) or a missing directory (Upload).
	Shard, Of        int
	MissingSourceOK  bool
	Progress         func(treecopy.Totals)
	ProgressInterval time.Duration
}

// Copy runs the copy and returns the totals so far, also on error. Conflicts are
// *treecopy.ConflictError, naming the file or the object.
func Copy(ctx context.Context, o Options) (treecopy.Totals, error) {
	c := &copier{o: o, m: treecopy.NewMeter(o.Progress, o.ProgressInterval)}
	if err := treecopy.CheckShard(o.Shard, o.Of); err != nil {
		return c.m.Done(), err
	}
	var err error
	if o.Direction == Download {
		err = c.download(ctx)
	} else {
		err = c.upload(ctx)
	}
	return c.m.Done(), err
}

type copier struct {
	o Options
	m *treecopy.Meter
}

// shaMeta is the user metadata holding an object's SHA-256 (x-amz-meta-sha256).
const shaMeta = "sha256"

func (c *copier) download(ctx context.Context) error {
	l := c.o.Location
	listPrefix := ""
	if l.Prefix != "" {
		// The slash keeps s3://b/run-7 from taking run-70's objects.
		listPrefix = l.Prefix + "/"
	}
	if err := os.MkdirAll(c.o.Dir, 0o755); err != nil {
		return err
	}
	seen := false
	for obj := range c.o.Client.ListObjects(ctx, l.Bucket, minio.ListObjectsOptions{Prefix: listPrefix, Recursive: true}) {
		if obj.Err != nil {
			return fmt.Errorf("listing %s: %w", l, explain(obj.Err))
		}
		seen = true
		rel := strings.TrimPrefix(obj.Key, listPrefix)
		if rel == "" || strings.HasSuffix(rel, "/") {
			continue // a "directory" marker of some tools: directories come with their files
		}
		if !safeRel(rel) {
			return fmt.Errorf("object %s/%s: its name would leave the destination directory", l.Bucket, obj.Key)
		}
		if !treecopy.InShard(rel, c.o.Shard, c.o.Of) {
			continue
		}
		if err := c.get(ctx, obj, filepath.Join(c.o.Dir, filepath.FromSlash(rel))); err != nil {
			return err
		}
	}
	if !seen {
		if c.o.MissingSourceOK {
			c.m.T.MissingSources = append(c.m.T.MissingSources, l.String())
			return nil
		}
		return fmt.Errorf("%s holds no objects", l)
	}
	return nil
}

// safeRel: a key below the prefix stays below the destination.
func safeRel(rel string) bool {
	if strings.HasPrefix(rel, "/") {
		return false
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == ".." || seg == "." || seg == "" {
			return false
		}
	}
	return true
}

// get downloads one object to dst.
func (c *copier) get(ctx context.Context, obj minio.ObjectInfo, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if st, err := os.Lstat(dst); err == nil {
		return c.existingFile(ctx, obj, dst, st)
	}
	out, err := treecopy.CreateTemp(dst)
	if err != nil {
		return err
	}
	tmp := out.Name()
	defer os.Remove(tmp)
	r, err := c.o.Client.GetObject(ctx, c.o.Location.Bucket, obj.Key, minio.GetObjectOptions{})
	if err != nil {
		out.Close()
		return fmt.Errorf("downloading %s/%s: %w", c.o.Location.Bucket, obj.Key, explain(err))
	}
	n, err := io.Copy(out, r)
	r.Close()
	if err == nil && n != obj.Size {
		err = fmt.Errorf("read %d bytes, the object has %d (changed during the copy?)", n, obj.Size)
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("downloading %s/%s: %w", c.o.Location.Bucket, obj.Key, explain(err))
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	if err := os.Link(tmp, dst); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
		// Another copier (a node staging the same input into a shared file system) won.
		same, serr := treecopy.SameContent(tmp, dst, obj.Size)
		if serr != nil {
			return serr
		}
		return c.skipped(same, dst, obj.Size)
	}
	c.m.T.Files++
	c.m.T.Bytes += obj.Size
	c.m.Tick()
	return nil
}

// existingFile decides about a destination file that is already there: compared with the
// object's stored SHA-256 when it has one, else with its content.
func (c *copier) existingFile(ctx context.Context, obj minio.ObjectInfo, dst string, st fs.FileInfo) error {
	if !st.Mode().IsRegular() || st.Size() != obj.Size {
		return c.skipped(false, dst, obj.Size)
	}
	local, err := treecopy.Digest(dst)
	if err != nil {
		return err
	}
	remote, err := c.remoteDigest(ctx, obj.Key)
	if err != nil {
		return err
	}
	return c.skipped(bytes.Equal(local, remote), dst, obj.Size)
}

func (c *copier) skipped(same bool, name string, size int64) error {
	if !same {
		return &treecopy.ConflictError{Path: name}
	}
	c.m.T.SkippedFiles++
	c.m.T.SkippedBytes += size
	c.m.Tick()
	return nil
}

// remoteDigest is an object's SHA-256: the metadata a stage-out stored, or else the content's.
func (c *copier) remoteDigest(ctx context.Context, key string) ([]byte, error) {
	bucket := c.o.Location.Bucket
	info, err := c.o.Client.StatObject(ctx, bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", bucket, key, explain(err))
	}
	if d, ok := storedDigest(info); ok {
		return d, nil
	}
	r, err := c.o.Client.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", bucket, key, explain(err))
	}
	defer r.Close()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return nil, fmt.Errorf("%s/%s: %w", bucket, key, explain(err))
	}
	return h.Sum(nil), nil
}

func storedDigest(info minio.ObjectInfo) ([]byte, bool) {
	for k, v := range info.UserMetadata {
		if strings.EqualFold(k, shaMeta) || strings.EqualFold(k, "X-Amz-Meta-"+shaMeta) {
			if d, err := hex.DecodeString(v); err == nil && len(d) == 32 {
				return d, true
			}
		}
	}
	return nil, false
}

func (c *copier) upload(ctx context.Context) error {
	root := c.o.Dir
	st, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist) && c.o.MissingSourceOK:
		c.m.T.MissingSources = append(c.m.T.MissingSources, root)
		return nil
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s is not a directory", root)
	}
	return filepath.WalkDir(root, func(src string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(root, src)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			// An object store has no directories: they come with their files' keys.
			return nil
		case treecopy.IsTemp(d.Name()):
			return nil
		case !treecopy.InShard(rel, c.o.Shard, c.o.Of):
			return nil
		case d.Type().IsRegular():
			return c.put(ctx, src, rel)
		default:
			// Symlinks, sockets, devices: an object store cannot hold them. Counted, and
			// documented, rather than followed out of the tree.
			c.m.T.Ignored++
			return nil
		}
	})
}

// put uploads one file, never replacing an object.
func (c *copier) put(ctx context.Context, src, rel string) error {
	l := c.o.Location
	key := l.Key(rel)
	sum, err := treecopy.Digest(src)
	if err != nil {
		return err
	}
	// A look first: a retry skips what is there without sending it again, and a server that
	// ignores If-None-Match still never has an object replaced by a later run.
	if done, err := c.existingObject(ctx, key, sum); done || err != nil {
		return err
	}
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	opts := minio.PutObjectOptions{
		UserMetadata: map[string]string{shaMeta: hex.EncodeToString(sum)},
		ContentType:  "application/octet-stream",
	}
	if st.Size() == 0 {
		// minio-go signs plain-http bodies in aws-chunked streaming form, which for an empty
		// body goes out without a Content-Length that servers require; nothing to sign here.
		opts.DisableContentSha256 = true
	}
	// The condition makes the server refuse the write if the key exists by now (another
	// node's upload between the look and the PUT).
	opts.SetMatchETagExcept("*")
	info, err := c.o.Client.PutObject(ctx, l.Bucket, key, f, st.Size(), opts)
	if err != nil {
		if preconditionFailed(err) {
			if done, eerr := c.existingObject(ctx, key, sum); done || eerr != nil {
				return eerr
			}
		}
		return fmt.Errorf("uploading %s to %s/%s: %w", src, l.Bucket, key, explain(err))
	}
	if info.Size != st.Size() {
		return fmt.Errorf("uploading %s: sent %d bytes, the file has %d (changed during the copy?)", src, info.Size, st.Size())
	}
	c.m.T.Files++
	c.m.T.Bytes += st.Size()
	c.m.Tick()
	return nil
}

// existingObject: done is true when key exists, with nil error if it holds sum (skipped) and
// a ConflictError otherwise.
func (c *copier) existingObject(ctx context.Context, key string, sum []byte) (done bool, err error) {
	l := c.o.Location
	info, err := c.o.Client.StatObject(ctx, l.Bucket, key, minio.StatObjectOptions{})
	if err != nil {
		if minio.ToErrorResponse(err).StatusCode == http.StatusNotFound {
			return false, nil
		}
		return true, fmt.Errorf("%s/%s: %w", l.Bucket, key, explain(err))
	}
	remote, ok := storedDigest(info)
	if !ok {
		if remote, err = c.remoteDigest(ctx, key); err != nil {
			return true, err
		}
	}
	return true, c.skipped(bytes.Equal(remote, sum), s3url.Scheme+l.Bucket+"/"+key, info.Size)
}

// preconditionFailed: the conditional PUT found the key taken (412), or a concurrent
// conditional write to it in progress (409, AWS).
func preconditionFailed(err error) bool {
	r := minio.ToErrorResponse(err)
	return r.StatusCode == http.StatusPreconditionFailed || r.Code == "PreconditionFailed" ||
		r.StatusCode == http.StatusConflict && r.Code == "ConditionalRequestConflict"
}

// explain adds a hint to the errors a user can fix.
func explain(err error) error {
	r := minio.ToErrorResponse(err)
	switch {
	case r.StatusCode == http.StatusForbidden || r.Code == "AccessDenied" || r.Code == "InvalidAccessKeyId" || r.Code == "SignatureDoesNotMatch":
		return fmt.Errorf("%w (check the credentials in s3.credentialsSecret and their permissions)", err)
	case r.Code == "NoSuchBucket":
		return fmt.Errorf("%w (check the bucket in s3.url, and s3.endpoint)", err)
	}
	return err
}
