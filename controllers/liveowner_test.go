package controllers_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/liveowner"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// The manager's client creates a child outside its burst buffer's namespace (where no owner
// reference lets the garbage collector remove it) only while that burst buffer is there, as
// the API server has it: a visit that read a lagging cached copy of a deleted burst buffer
// cannot leave a pod nothing deletes. The lagging cache itself cannot be produced on purpose,
// so the spec calls the client as such a visit would, with a burst buffer the API server has
// or has not.
var _ = Describe("Children in the operator's namespace", func() {
	child := func(bb *v1alpha1.BurstBuffer, ns, name string) *corev1.Pod {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: nodetask.Labels(bb, "clean")},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "agent"}}},
		}
		nodetask.Owned(bb, &pod.ObjectMeta)
		return pod
	}
	exists := func(ctx context.Context, pod *corev1.Pod) bool {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
		Expect(client.IgnoreNotFound(err)).To(Succeed())
		return err == nil
	}

	It("are created only while their burst buffer is there, by UID", func(ctx SpecContext) {
		ns := newNamespace(ctx)
		c := liveowner.Wrap(k8s, k8s)
		bb := localBB(ns, "owner", 1)
		Expect(k8s.Create(ctx, bb)).To(Succeed())

		By("a live burst buffer: created, in its namespace and in the operator's")
		here, there := child(bb, ns, "owner-clean-0"), child(bb, operatorNamespace, "owner-live-clean-0")
		Expect(c.Create(ctx, here)).To(Succeed())
		Expect(c.Create(ctx, there)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, there))).To(Succeed()) })

		By("within one visit, the API server is asked once per burst buffer")
		reads := &countingReader{Reader: k8s}
		visit := liveowner.ForVisit(ctx)
		counted := liveowner.Wrap(k8s, reads)
		for i := range 3 {
			pod := child(bb, operatorNamespace, fmt.Sprintf("owner-visit-clean-%d", i))
			Expect(counted.Create(visit, pod)).To(Succeed())
			DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8s.Delete(ctx, pod))).To(Succeed()) })
		}
		Expect(reads.n.Load()).To(BeEquivalentTo(1))

		By("a burst buffer created again under the same name: not the old one's children")
		old := bb.DeepCopy()
		old.UID = "00000000-0000-0000-0000-000000000000"
		other := child(old, operatorNamespace, "owner-old-clean-0")
		err := c.Create(ctx, other)
		Expect(errors.Is(err, liveowner.ErrOwnerGone)).To(BeTrue(), "%v", err)
		Expect(exists(ctx, other)).To(BeFalse())

		By("a deleted burst buffer: refused in the operator's namespace, with the reason")
		deleteAndWait(ctx, get(ctx, bb))
		late := child(bb, operatorNamespace, "owner-late-clean-0")
		err = c.Create(ctx, late)
		Expect(errors.Is(err, liveowner.ErrOwnerGone)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring(operatorNamespace + "/owner-late-clean-0"))
		Expect(exists(ctx, late)).To(BeFalse())

		By("beside it, the garbage collector's business: created as asked")
		beside := child(bb, ns, "owner-clean-1")
		Expect(c.Create(ctx, beside)).To(Succeed())
		Expect(exists(ctx, beside)).To(BeTrue())
	})
})

// countingReader counts the reads that reach the API server.
type countingReader struct {
	client.Reader
	n atomic.Int32
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.n.Add(1)
	return r.Reader.Get(ctx, key, obj, opts...)
}
