package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/spf13/cobra"

	"github.com/beeburst/beeburst/internal/agentapi"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/objcopy"
	"github.com/beeburst/beeburst/internal/s3url"
	"github.com/beeburst/beeburst/internal/treecopy"
)

// newStage copies data into or out of a burst buffer: the stage-in and stage-out pods the
// operator runs on the burst buffer's nodes.
func newStage(g *globals, stdout io.Writer) *cobra.Command {
	var from, to []string
	var shard, of int
	var missingOK bool
	var progress time.Duration
	var s3Endpoint, s3Region, beegfsDir string
	c := &cobra.Command{
		Use:   agentapi.CmdStage + " --from DIR|URL --to DIR|URL [--from DIR|URL --to DIR|URL ...] [--shard I --of N] [--missing-ok]",
		Short: "copy directory trees, never overwriting: the stage-in and stage-out of a burst buffer",
		Long: `Copies the tree below each --from to the --to of the same position. A file appears at its
destination complete or not at all (temporary name, fsync, hard link). An existing destination
file is never overwritten: the same content counts as copied (a retry), other content fails the
copy naming the file. With --shard/--of, this copier takes only the files whose path hashes to
its shard (a shared file system copied by N nodes at once). --missing-ok makes a missing --from
an empty copy (stage-out from a node the job did not write on). --beegfs DIR refuses to copy
unless DIR is a BeeGFS mount (a node whose client mount is gone shows an empty mount point,
which must not pass for a job that wrote nothing). Progress goes to stderr as
"progress {json}" lines; the Report's "stage" holds the totals.

Either side of a pair may be an object store, s3://bucket/prefix (the other a directory): its
objects are downloaded below the directory, or the directory's files uploaded below the prefix
with a conditional PUT (If-None-Match: *) and their SHA-256 as metadata, so that an object is
never replaced either. --s3-endpoint and --s3-region apply to every such URL; a URL's query
(?endpoint=..&region=..&env-prefix=..) overrides them for its pair. Credentials come from
AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (after the URL's env-prefix),
else from the pod's IAM role (IRSA, instance profile).`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if len(from) == 0 || len(from) != len(to) {
				return fmt.Errorf("stage: give --from and --to in pairs (%d --from, %d --to)", len(from), len(to))
			}
			var pairs []treecopy.Pair
			for i := range from {
				if s3url.IsURL(from[i]) && s3url.IsURL(to[i]) {
					return fmt.Errorf("stage: %s to %s: one side of a pair must be a directory", from[i], to[i])
				}
				pairs = append(pairs, treecopy.Pair{From: from[i], To: to[i]})
			}
			return runReport(g, stdout, agentapi.CmdStage, func(ctx context.Context, r *bench.Report) error {
				if beegfsDir != "" {
					if err := requireFileSystem(beegfsDir, beegfsMagic, "BeeGFS"); err != nil {
						return err
					}
				}
				start := time.Now()
				var done treecopy.Totals // of the pairs before the current one
				report := func(t treecopy.Totals) {
					// Always printed, also with -q: the operator reads the last such line
					// from the pod's log into the status.
					sum := done
					sum.Add(t)
					sum.Seconds = time.Since(start).Seconds()
					if b, err := json.Marshal(sum); err == nil {
						fmt.Fprintf(os.Stderr, "%s%s\n", treecopy.ProgressPrefix, b)
					}
				}
				var err error
				for _, p := range pairs {
					var t treecopy.Totals
					t, err = stagePair(ctx, p, shard, of, missingOK, s3Endpoint, s3Region, report, progress)
					done.Add(t)
					if err != nil {
						break
					}
				}
				done.Seconds = time.Since(start).Seconds()
				r.Stage = &done
				return err
			})
		},
	}
	f := c.Flags()
	f.StringArrayVar(&from, agentapi.FlagFrom, nil, "source directory (repeatable)")
	f.StringArrayVar(&to, agentapi.FlagTo, nil, "destination directory, created if missing (repeatable, paired with --from)")
	f.IntVar(&shard, agentapi.FlagShard, 0, "this copier's shard, 0 <= shard < of")
	f.IntVar(&of, agentapi.FlagOf, 1, "number of copiers sharing the files")
	f.BoolVar(&missingOK, agentapi.FlagMissingOK, false, "a missing --from is an empty copy, not an error")
	f.StringVar(&beegfsDir, agentapi.FlagBeeGFS, "", "refuse to copy unless this directory is a BeeGFS mount")
	f.DurationVar(&progress, "progress-interval", 5*time.Second, "how often progress is printed")
	f.StringVar(&s3Endpoint, "s3-endpoint", "", "object store URL (http or https) for s3:// pairs; empty: AWS S3")
	f.StringVar(&s3Region, "s3-region", "", "bucket region for s3:// pairs; empty: asked from the server")
	return c
}

// beegfsMagic is the BeeGFS client's file system type in statfs (BEEGFS_MAGIC in the client
// module's FhgfsOpsSuper.h).
const beegfsMagic = 0x19830326

// requireFileSystem fails unless dir is on a file system of type magic (statfs f_type). The
// message names no path: the operator shows it as the node's copy failure.
func requireFileSystem(dir string, magic uint32, name string) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return fmt.Errorf("the burst buffer's file system cannot be inspected on this node: %w", err)
	}
	if got := uint32(st.Type); got != magic {
		return fmt.Errorf("the burst buffer's %s file system is not mounted on this node (its mount point has file system type %#x, not %s's %#x): nothing was copied",
			name, got, name, magic)
	}
	return nil
}

// stagePair copies one pair with the copier its sides call for.
func stagePair(ctx context.Context, p treecopy.Pair, shard, of int, missingOK bool, endpoint, region string,
	progress func(treecopy.Totals), interval time.Duration) (treecopy.Totals, error) {
	if !s3url.IsURL(p.From) && !s3url.IsURL(p.To) {
		return treecopy.Copy(ctx, treecopy.Options{Pairs: []treecopy.Pair{p}, Shard: shard, Of: of,
			MissingSourceOK: missingOK, Progress: progress, ProgressInterval: interval})
	}
	o := objcopy.Options{Shard: shard, Of: of, MissingSourceOK: missingOK, Progress: progress, ProgressInterval: interval}
	u := p.From
	o.Direction, o.Dir = objcopy.Download, p.To
	if s3url.IsURL(p.To) {
		u, o.Direction, o.Dir = p.To, objcopy.Upload, p.From
	}
	l, err := s3url.ParseURL(u)
	if err != nil {
		return treecopy.Totals{}, err
	}
	if l.Endpoint == "" {
		l.Endpoint = endpoint
	}
	if l.Region == "" {
		l.Region = region
	}
	o.Location = l
	// Without keys in the environment: the pod's role (IRSA's web identity token, the
	// container or instance metadata service), as the AWS SDKs' default chain.
	creds, err := objcopy.Credentials(ctx, l, os.Getenv, &credentials.IAM{Client: &http.Client{Timeout: 10 * time.Second}})
	if err != nil {
		return treecopy.Totals{}, err
	}
	if o.Client, err = objcopy.NewClient(l, creds); err != nil {
		return treecopy.Totals{}, err
	}
	return objcopy.Copy(ctx, o)
}
