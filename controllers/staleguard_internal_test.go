package controllers

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestStaleGuard(t *testing.T) {
	var g staleGuard
	a, b := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	if g.stale(a, "10") {
		t.Fatal("nothing written yet: not stale")
	}
	g.wrote(a, "10", "10", "10") // a visit that changed nothing
	if g.stale(a, "10") {
		t.Fatal("an unchanged object is not stale")
	}
	g.wrote(a, "12", "10", "11") // read 10, the finalizer's patch made 11, the status patch 12
	if !g.stale(a, "10") || !g.stale(a, "10") || !g.stale(a, "11") {
		t.Fatal("versions 10 and 11 after a write that went through them are stale, on every visit until the cache catches up")
	}
	if g.stale(b, "10") {
		t.Fatal("another burst buffer is not affected")
	}
	if g.stale(a, "12") {
		t.Fatal("the written version is not stale")
	}
	if g.stale(a, "10") {
		t.Fatal("once the cache caught up the record is gone")
	}
	g.wrote(b, "21", "20")
	g.forget(b)
	if g.stale(b, "20") {
		t.Fatal("a forgotten burst buffer is not stale")
	}
	g.wrote(b, "5", "")
	if g.stale(b, "") {
		t.Fatal("an object read without a version is never stale")
	}
}

func TestStaleGuardFinished(t *testing.T) {
	var g staleGuard
	t0 := time.Date(2026, 11, 27, 2, 26, 40, 0, time.UTC)
	if g.isFinished("a") {
		t.Fatal("nothing finished yet")
	}
	g.finish("a", t0)
	if !g.isFinished("a") || g.isFinished("b") {
		t.Fatal("only the burst buffer whose finalizer was removed is finished")
	}
	g.finish("b", t0.Add(finishedKept+time.Second))
	if g.isFinished("a") || !g.isFinished("b") {
		t.Fatal("a finished teardown is forgotten once the cache has long caught up")
	}
}
