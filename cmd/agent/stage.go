package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/treecopy"
)

// newStage copies data into or out of a burst buffer: the stage-in and stage-out pods the
// operator runs on the burst buffer's nodes.
func newStage(g *globals, stdout io.Writer) *cobra.Command {
	var from, to []string
	var shard, of int
	var missingOK bool
	var progress time.Duration
	c := &cobra.Command{
		Use:   "stage --from DIR --to DIR [--from DIR --to DIR ...] [--shard I --of N] [--missing-ok]",
		Short: "copy directory trees, never overwriting: the stage-in and stage-out of a burst buffer",
		Long: `Copies the tree below each --from to the --to of the same position. A file appears at its
destination complete or not at all (temporary name, fsync, hard link). An existing destination
file is never overwritten: the same content counts as copied (a retry), other content fails the
copy naming the file. With --shard/--of, this copier takes only the files whose path hashes to
its shard (a shared file system copied by N nodes at once). --missing-ok makes a missing --from
an empty copy (stage-out from a node the job did not write on). Progress goes to stderr as
"progress {json}" lines; the Report's "stage" holds the totals.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if len(from) == 0 || len(from) != len(to) {
				return fmt.Errorf("stage: give --from and --to in pairs (%d --from, %d --to)", len(from), len(to))
			}
			o := treecopy.Options{Shard: shard, Of: of, MissingSourceOK: missingOK, ProgressInterval: progress,
				Progress: func(t treecopy.Totals) {
					// Always printed, also with -q: the operator reads the last such line
					// from the pod's log into the status.
					if b, err := json.Marshal(t); err == nil {
						fmt.Fprintf(os.Stderr, "%s%s\n", treecopy.ProgressPrefix, b)
					}
				}}
			for i := range from {
				o.Pairs = append(o.Pairs, treecopy.Pair{From: from[i], To: to[i]})
			}
			return runReport(g, stdout, "stage", func(ctx context.Context, r *bench.Report) error {
				t, err := treecopy.Copy(ctx, o)
				r.Stage = &t
				return err
			})
		},
	}
	f := c.Flags()
	f.StringArrayVar(&from, "from", nil, "source directory (repeatable)")
	f.StringArrayVar(&to, "to", nil, "destination directory, created if missing (repeatable, paired with --from)")
	f.IntVar(&shard, "shard", 0, "this copier's shard, 0 <= shard < of")
	f.IntVar(&of, "of", 1, "number of copiers sharing the files")
	f.BoolVar(&missingOK, "missing-ok", false, "a missing --from is an empty copy, not an error")
	f.DurationVar(&progress, "progress-interval", 5*time.Second, "how often progress is printed")
	return c
}
