package beegfs

import (
	"strings"
	"testing"

	"github.com/beeburst/beeburst/internal/golden"
)

func TestChunkPodsGolden(t *testing.T) {
	in := testInstance(2)
	candidate := ChunkTask{Index: 1, Dir: ChunkDir(4 << 20), Size: 4 << 20}
	apply := ChunkTask{Index: ChunkApplyIndex, Dir: "/", Size: 4 << 20, RemoveTuning: true}
	golden.Assert(t, "chunk-pods.yaml", golden.YAML(t, in.ChunkPod(candidate), in.ChunkPod(apply)))
	golden.Assert(t, "chunk-candidate.sh", []byte(in.ChunkScript(candidate)))
	golden.Assert(t, "chunk-apply.sh", []byte(in.ChunkScript(apply)))
}

func TestChunkDir(t *testing.T) {
	for size, want := range map[int64]string{64 << 10: "/.beeburst-chunks/64ki", 512 << 10: "/.beeburst-chunks/512ki", 16 << 20: "/.beeburst-chunks/16Mi"} {
		if got := ChunkDir(size); got != want {
			t.Errorf("ChunkDir(%d) = %s, want %s", size, got, want)
		}
	}
	in := testInstance(1)
	if s := in.ChunkScript(ChunkTask{Dir: "/", Size: 1 << 20}); strings.Contains(s, "mkdir") || strings.Contains(s, "rm -rf") {
		t.Errorf("the root is neither made nor removed:\n%s", s)
	}
}
