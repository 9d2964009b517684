package beegfs

import (
	"context"
	"errors"
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/engine"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/shorten"
)

// Chunk-size tuning (layout.chunkSizePolicy Auto): each candidate size is measured in a
// directory of its own below ChunkTuningDir, whose stripe pattern the CLI sets (new files
// and subdirectories inherit it, so the benchmark's own subdirectory does); then the chosen
// size becomes the root's pattern and the candidates' directories go. The CLI
// (`beegfs entry set --chunk-size --num-targets`, beegfs-go ctl/internal/cmd/entry/set.go)
// names BeeGFS paths from the file system's root (--mount=none); the directories are made
// and removed through the client's mount on the management node, which is also a client.

// ChunkTuningDir holds the candidates' directories, relative to the file system's root.
const ChunkTuningDir = "/.beeburst-chunks"

// ChunkApplyIndex is the index of the task that sets the chosen size on the root (the
// candidates' tasks are 0..3).
const ChunkApplyIndex = 99

// ChunkDir is the directory a candidate size is measured in, relative to the root.
func ChunkDir(size int64) string { return path.Join(ChunkTuningDir, chunkFlag(size)) }

// ChunkTask is one setting of a stripe chunk size.
type ChunkTask struct {
	// Index names the task's pod: a candidate's position, or ChunkApplyIndex.
	Index int
	// Dir is the BeeGFS path, from the root: ChunkDir(Size) for a candidate, "/" for the
	// chosen size. A candidate's directory is made first.
	Dir  string
	Size int64
	// RemoveTuning removes ChunkTuningDir afterwards (the last task), best effort: a
	// benchmark stopped by a budget cut may still be removing its files.
	RemoveTuning bool
}

// ChunkOutcome is where a ChunkTask is.
type ChunkOutcome struct {
	Done bool
	// Failure says why the task failed; empty when it succeeded.
	Failure string
}

// ChunkPod runs ChunkScript from the management node with the CLI, like the striping task,
// and with the file system mounted at nodetask.FileSystemMount (the client's mount on that
// node) to make and remove the directories.
func (in Instance) ChunkPod(t ChunkTask) *corev1.Pod {
	pod := in.cliTask(nodetask.ComponentChunkSet, in.ChunkScript(t), 120)
	pod.Name = nodetask.Name(in.BB, nodetask.ComponentChunkSet, t.Index)
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{
		Name: "burst-buffer",
		VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: MountPoint(in.BB), Type: ptr.To(corev1.HostPathDirectory),
		}},
	})
	c := &pod.Spec.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{
		Name: "burst-buffer", MountPath: nodetask.FileSystemMount, MountPropagation: ptr.To(corev1.MountPropagationHostToContainer),
	})
	return pod
}

// ChunkScript sets t.Size as the stripe chunk size of t.Dir (over the stripe width of
// spec.layout) and leaves one line in the termination log.
func (in Instance) ChunkScript(t ChunkTask) string {
	st := StripingFor(in.BB, len(in.Nodes))
	chunk := chunkFlag(t.Size)
	mkdir, remove := "", ""
	if t.Dir != "/" {
		mkdir = fmt.Sprintf("mkdir -p %s%s\n", nodetask.FileSystemMount, t.Dir)
	}
	if t.RemoveTuning {
		remove = fmt.Sprintf("rm -rf %s%s || echo \"%s not removed\" >&2\n", nodetask.FileSystemMount, ChunkTuningDir, ChunkTuningDir)
	}
	return fmt.Sprintf(`set -eu
%s%sbee entry set --chunk-size=%s --num-targets=%d %s
%secho "stripe pattern of %s: chunk size %s over %d target(s)" | tee /dev/termination-log
`, in.cliFunc(), mkdir, chunk, st.NumTargets, t.Dir, remove, t.Dir, chunk, st.NumTargets)
}

// SetChunkSize runs t's task and reports its end. A failed task is not retried: the
// tuning reports the size as failed and goes on.
func (e Engine) SetChunkSize(ctx context.Context, bb *v1alpha1.BurstBuffer, nodes []string, t ChunkTask) (ChunkOutcome, error) {
	if e.Client == nil {
		return ChunkOutcome{}, errors.New("the beegfs engine has no Kubernetes client (operator wiring)")
	}
	if bb.Status.BeeGFS == nil || bb.Status.BeeGFS.ManagementAddress == "" {
		return ChunkOutcome{}, errors.New("setting a chunk size needs a provisioned file system (status.beegfs)")
	}
	st, msg, err := engine.RunTask(ctx, e.Client, e.instance(bb, nodes).ChunkPod(t))
	switch {
	case err != nil || st == nodetask.Running:
		return ChunkOutcome{}, err
	case st == nodetask.Failed:
		return ChunkOutcome{Done: true, Failure: shorten.OneLine(msg, messageMax)}, nil
	}
	return ChunkOutcome{Done: true}, nil
}
