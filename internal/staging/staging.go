// Package staging plans the stage-in and stage-out copies of a burst buffer as one pod per
// node and summarises their pods into the status. Pure functions: the controller creates the
// pods and writes the status; the copy itself is internal/treecopy (claims) or
// internal/objcopy (object stores), run by the agent.
//
// Who copies what:
//   - local engine (every node has its own scratch): stage-in copies everything to every
//     node, so a workload pod finds its input wherever it lands; stage-out copies each node's
//     directory into the same destination, merged. A path written with different content on
//     two nodes is a conflict that fails the stage-out (nothing is overwritten), so results
//     should carry the pod's or node's name;
//   - beegfs (one shared file system): node i of n copies the files whose path hashes to
//     shard i, so the file system is copied once, by all nodes in parallel.
package staging

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/agentapi"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/claim"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/s3url"
	"github.com/beeburst/beeburst/internal/shorten"
	"github.com/beeburst/beeburst/internal/treecopy"
)

// Direction is stage-in or stage-out.
type Direction string

// Directions; the values are the pods' component labels.
const (
	In  Direction = "stagein"
	Out Direction = "stageout"
)

// Name is how messages call the direction: stage-in, stage-out.
func (d Direction) Name() string {
	if d == In {
		return "stage-in"
	}
	return "stage-out"
}

// Field is the spec field of the direction: stageIn, stageOut.
func (d Direction) Field() string {
	if d == In {
		return "stageIn"
	}
	return "stageOut"
}

// Condition is the condition type of the direction: StagedIn, StagedOut.
func (d Direction) Condition() string {
	if d == In {
		return v1alpha1.ConditionStagedIn
	}
	return v1alpha1.ConditionStagedOut
}

// Where a stage pod sees the burst buffer and the claims.
const (
	BurstBufferMount = nodetask.FileSystemMount
	ClaimsMount      = "/claims"
)

// Specs are the copies of a direction.
func Specs(bb *v1alpha1.BurstBuffer, d Direction) []v1alpha1.StageSpec {
	if d == In {
		return bb.Spec.StageIn
	}
	return bb.Spec.StageOut
}

// Claims are the distinct claim names of the copies, in order of first use.
func Claims(specs []v1alpha1.StageSpec) []string {
	var names []string
	for _, s := range specs {
		if s.S3 == nil && !slices.Contains(names, s.PersistentVolumeClaim.ClaimName) {
			names = append(names, s.PersistentVolumeClaim.ClaimName)
		}
	}
	return names
}

// Secrets are the distinct credential Secrets of the copies' object stores, in order of
// first use.
func Secrets(specs []v1alpha1.StageSpec) []string {
	var names []string
	for _, s := range specs {
		if s.S3 != nil && s.S3.CredentialsSecret != "" && !slices.Contains(names, s.S3.CredentialsSecret) {
			names = append(names, s.S3.CredentialsSecret)
		}
	}
	return names
}

// secretEnvPrefix is put before the variable names of Secret k (envFrom's prefix), so that
// the copies of several stores each find their own AWS_* keys.
func secretEnvPrefix(k int) string { return fmt.Sprintf("S3_%d_", k) }

// s3Arg is the agent's argument for an object store: the URL, with the store's endpoint,
// region and credential variables' prefix as its query (s3url.ParseURL).
func s3Arg(s *v1alpha1.S3Source, secrets []string) string {
	q := url.Values{}
	if s.Endpoint != "" {
		q.Set(s3url.QueryEndpoint, s.Endpoint)
	}
	if s.Region != "" {
		q.Set(s3url.QueryRegion, s.Region)
	}
	if s.CredentialsSecret != "" {
		q.Set(s3url.QueryEnvPrefix, secretEnvPrefix(slices.Index(secrets, s.CredentialsSecret)))
	}
	if len(q) == 0 {
		return s.URL
	}
	return s.URL + "?" + q.Encode()
}

// Parallel says whether the copies may run on all nodes at once: every claim can be mounted
// by several nodes (ReadWriteMany; for stage-in, which mounts read-only, ReadOnlyMany too).
// Otherwise nodes copy one after another, which a ReadWriteOnce claim allows. Object stores
// take any number of clients: they never hold a copy back.
func Parallel(d Direction, claims []corev1.PersistentVolumeClaim) bool {
	for _, c := range claims {
		modes := c.Status.AccessModes
		if len(modes) == 0 { // not bound yet: what was asked for
			modes = c.Spec.AccessModes
		}
		ok := false
		for _, m := range modes {
			if m == corev1.ReadWriteMany || (d == In && m == corev1.ReadOnlyMany) {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// Shared says whether the engine's file system is one for all nodes (copied in shards) or
// node-local (copied per node).
func Shared(bb *v1alpha1.BurstBuffer) bool { return bb.Spec.Engine == v1alpha1.EngineBeeGFS }

// Key is a short hash of a direction's copies. Pod names carry it, so that a changed spec (a
// corrected claim name after a failed stage-out) gets fresh pods and the old ones are
// recognisable as stale.
func Key(specs []v1alpha1.StageSpec) string {
	b, _ := json.Marshal(specs)
	return nodetask.Hash(string(b))[:6]
}

// PodName is the name of node i's copy pod.
func PodName(bb *v1alpha1.BurstBuffer, d Direction, i int) string {
	return fmt.Sprintf("%s-%s-%s-%d", bb.Name, d, Key(Specs(bb, d)), i)
}

// Pod builds node i's copy pod. The burst buffer is reached as the workload reaches it
// (nodetask.FileSystemMount), claims as volumes (read-only for stage-in), object stores by
// URL with their credentials from their Secrets (envFrom). The pod is scheduled, not pinned
// with nodeName, so the scheduler binds the claims (see nodetask.Spec.Scheduled), and has no
// deadline: a copy takes as long as the data needs.
func Pod(bb *v1alpha1.BurstBuffer, d Direction, i int, node, image string) *corev1.Pod {
	specs := Specs(bb, d)
	claims := Claims(specs)
	readOnly := d == In
	var vols []corev1.Volume
	var mounts []corev1.VolumeMount
	for k, c := range claims {
		name := fmt.Sprintf("claim-%d", k)
		vols = append(vols, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c, ReadOnly: readOnly},
		}})
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: path.Join(ClaimsMount, name), ReadOnly: readOnly})
	}
	secrets := Secrets(specs)
	// A copy takes as long as the data needs: the agent's deadline is a year, the pod has none.
	req := agentapi.Stage{Globals: agentapi.Globals{Timeout: 8760 * time.Hour}}
	for _, s := range specs {
		inBB := path.Join(BurstBufferMount, s.Path)
		var durable string
		if s.S3 != nil {
			durable = s3Arg(s.S3, secrets)
		} else {
			durable = path.Join(ClaimsMount, fmt.Sprintf("claim-%d", slices.Index(claims, s.PersistentVolumeClaim.ClaimName)), s.PersistentVolumeClaim.Path)
		}
		from, to := durable, inBB
		if d == Out {
			from, to = inBB, durable
		}
		req.Pairs = append(req.Pairs, agentapi.Pair{From: from, To: to})
	}
	// The job may not have written a stage-out path (on every node, with node-local scratch).
	req.MissingOK = d == Out
	if Shared(bb) {
		req.Shard, req.Of = i, len(bb.Status.Nodes)
		// A node whose BeeGFS client mount is gone shows the empty mount point: copied as is,
		// it would be a stage-out of "nothing" that lets the teardown remove the targets. The
		// agent checks that what it copies is BeeGFS first.
		req.BeeGFS = BurstBufferMount
	}
	// The burst buffer through its staging claim (internal/claim): the copy runs beside the
	// user's claims and Secrets, in the burst buffer's namespace, with no host path.
	vols = append(vols, corev1.Volume{Name: "burst-buffer", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name(bb, claim.Staging)},
	}})
	mounts = append(mounts, corev1.VolumeMount{Name: "burst-buffer", MountPath: BurstBufferMount})
	pod := nodetask.Pod(bb, nodetask.Spec{
		Component: string(d), Index: i, Node: node, Image: image, Args: req.Args(),
		DeadlineSeconds: -1, Scheduled: true, Volumes: vols, Mounts: mounts, InBurstBufferNamespace: true,
	})
	for k, name := range secrets {
		pod.Spec.Containers[0].EnvFrom = append(pod.Spec.Containers[0].EnvFrom, corev1.EnvFromSource{
			Prefix: secretEnvPrefix(k), SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}},
		})
	}
	pod.Name = PodName(bb, d, i)
	return pod
}

// Readable rewrites the pod-side paths in a copy's message to what the user wrote in the
// spec: "/claims/claim-0/run-1/x" becomes "claim results: run-1/x", "/burst-buffer/results/x"
// becomes "burst buffer: results/x".
func Readable(bb *v1alpha1.BurstBuffer, d Direction, msg string) string {
	claims := Claims(Specs(bb, d))
	for k := len(claims) - 1; k >= 0; k-- { // claim-10 before claim-1, its prefix
		root := path.Join(ClaimsMount, fmt.Sprintf("claim-%d", k))
		msg = strings.ReplaceAll(msg, root+"/", "claim "+claims[k]+": ")
		msg = strings.ReplaceAll(msg, root, "claim "+claims[k]+": .")
	}
	msg = strings.ReplaceAll(msg, BurstBufferMount+"/", "burst buffer: ")
	return strings.ReplaceAll(msg, BurstBufferMount, "burst buffer: .")
}

// NodePod is a node's copy pod as found in the API (nil: not created yet), with the last
// progress its running copy printed, if known. Gone: the Node object is deleted, so no copy
// can be made there.
type NodePod struct {
	Node     string
	Pod      *corev1.Pod
	Progress *treecopy.Totals
	Gone     bool
}

// GoneMessage is the node status message of a gone node's copy that did not succeed.
const GoneMessage = "the node is gone: its data cannot be copied unless it comes back"

// LastProgress finds the last progress line in a copy pod's log tail.
func LastProgress(log string) *treecopy.Totals {
	lines := strings.Split(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		rest, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), treecopy.ProgressPrefix)
		if !ok {
			continue
		}
		var t treecopy.Totals
		if json.Unmarshal([]byte(rest), &t) == nil {
			return &t
		}
	}
	return nil
}

// Summarise turns the nodes' pods into the status of the copy. now bounds the rate of a copy
// still running.
func Summarise(pods []NodePod, parallel bool, now time.Time) v1alpha1.StageStatus {
	st := v1alpha1.StageStatus{Phase: v1alpha1.StagePending}
	var start, end time.Time
	succeeded, failed := 0, 0
	// copySeconds is the copy time the agents measured: the slowest node when nodes copy at
	// once, the sum when they take turns. API timestamps have whole seconds only.
	copySeconds := 0.0
	for _, np := range pods {
		ns := v1alpha1.StageNodeStatus{Name: np.Node, Phase: v1alpha1.StagePending}
		if np.Pod == nil {
			if np.Gone {
				ns.Message = GoneMessage
			} else if !parallel {
				ns.Message = "waits for the nodes before it (a claim that is not ReadWriteMany is mounted by one node at a time)"
			}
			st.Nodes = append(st.Nodes, ns)
			continue
		}
		ns.Pod = np.Pod.Name
		if t := np.Pod.CreationTimestamp.Time; !t.IsZero() && (start.IsZero() || t.Before(start)) {
			start = t
		}
		state, msg := nodetask.StateOf(np.Pod)
		switch state {
		case nodetask.Running:
			ns.Phase, ns.Message = runningPhase(np.Pod)
			if p := np.Progress; p != nil {
				// Figures so far, from the copy's log; the report replaces them at the end.
				ns.Files, ns.Bytes = p.Files, p.Bytes
			}
		case nodetask.Succeeded, nodetask.Failed:
			rep, err := report(msg)
			if rep.Stage != nil {
				ns.Files, ns.Bytes = rep.Stage.Files, rep.Stage.Bytes
				if parallel {
					copySeconds = max(copySeconds, rep.Stage.Seconds)
				} else {
					copySeconds += rep.Stage.Seconds
				}
				st.SkippedFiles += rep.Stage.SkippedFiles
				if len(rep.Stage.MissingSources) > 0 {
					ns.Message = "nothing to copy at " + strings.Join(rep.Stage.MissingSources, ", ")
				}
			}
			if t := finished(np.Pod); t.After(end) {
				end = t
			}
			if state == nodetask.Succeeded && err == nil {
				ns.Phase = v1alpha1.StageSucceeded
				succeeded++
			} else {
				ns.Phase = v1alpha1.StageFailed
				ns.Message = failure(msg, rep, err)
				failed++
			}
		}
		st.Files += ns.Files
		st.Bytes += ns.Bytes
		st.Nodes = append(st.Nodes, ns)
	}
	if !start.IsZero() {
		st.StartTime = &metav1.Time{Time: start}
		st.Phase = v1alpha1.StageRunning
	}
	switch {
	case failed > 0:
		st.Phase = v1alpha1.StageFailed
	case succeeded == len(pods) && len(pods) > 0:
		st.Phase = v1alpha1.StageSucceeded
		st.CompletionTime = &metav1.Time{Time: end}
		now = end
	}
	switch {
	case st.Phase == v1alpha1.StageSucceeded && copySeconds > 0:
		st.BytesPerSecond = int64(float64(st.Bytes) / copySeconds)
	case !start.IsZero() && now.Sub(start) > 0:
		st.BytesPerSecond = int64(float64(st.Bytes) / now.Sub(start).Seconds())
	}
	return st
}

// Message is one line for the condition: totals, and the nodes that wait or failed.
func Message(d Direction, st v1alpha1.StageStatus) string {
	what := d.Name()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d file(s), %s", what, strings.ToLower(string(st.Phase)), st.Files, limits.FormatBytes(float64(st.Bytes)))
	if st.BytesPerSecond > 0 {
		fmt.Fprintf(&b, " at %s/s", limits.FormatBytes(float64(st.BytesPerSecond)))
	}
	if st.SkippedFiles > 0 {
		fmt.Fprintf(&b, ", %d already there", st.SkippedFiles)
	}
	var notes []string
	for _, n := range st.Nodes {
		if n.Message != "" && (n.Phase == v1alpha1.StageFailed || n.Phase == v1alpha1.StagePending || n.Phase == v1alpha1.StageRunning) {
			notes = append(notes, fmt.Sprintf("%s: %s", n.Name, n.Message))
		}
	}
	sort.Strings(notes)
	if len(notes) > 0 {
		b.WriteString("; " + strings.Join(notes, "; "))
	}
	return b.String()
}

// runningPhase: a pod not yet started says why (the scheduler's message, e.g. a claim the
// node cannot reach, or a volume that does not mount).
func runningPhase(p *corev1.Pod) (v1alpha1.StagePhase, string) {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return v1alpha1.StagePending, "not scheduled: " + c.Message
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running != nil {
			return v1alpha1.StageRunning, ""
		}
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return v1alpha1.StagePending, strings.TrimSpace(w.Reason + " " + w.Message)
		}
	}
	if p.Status.Phase == corev1.PodRunning {
		return v1alpha1.StageRunning, ""
	}
	return v1alpha1.StagePending, ""
}

func report(msg string) (bench.Report, error) {
	rep, err := bench.DecodeReport([]byte(msg))
	switch {
	case bench.Unreadable(err):
		return rep, fmt.Errorf("no copy report: %s", shorten.FirstLine(msg, 200))
	case err != nil:
		return rep, err
	}
	if rep.Phase != bench.PhaseSucceeded {
		return rep, fmt.Errorf("%s", rep.Message)
	}
	return rep, nil
}

func failure(msg string, rep bench.Report, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case rep.Message != "":
		return rep.Message
	}
	return shorten.FirstLine(msg, 200)
}

func finished(p *corev1.Pod) time.Time {
	var t time.Time
	for _, cs := range p.Status.ContainerStatuses {
		if term := cs.State.Terminated; term != nil && term.FinishedAt.After(t) {
			t = term.FinishedAt.Time
		}
	}
	return t
}
