package controllers_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

var _ = Describe("Stage 1: limits from the documented hardware", func() {
	var (
		ctx context.Context
		ns  string
	)
	documented := func(link, write, read string) map[string]string {
		return map[string]string{
			"pool":                                ns,
			v1alpha1.LabelLinkRateBitsPerSecond:   link,
			v1alpha1.LabelDiskWriteBytesPerSecond: write,
			v1alpha1.LabelDiskReadBytesPerSecond:  read,
		}
	}
	BeforeEach(func() {
		ctx = context.Background()
		ns = newNamespace(ctx)
	})

	It("publishes the local engine's limit from node labels before anything runs: devices, no network term", func() {
		makeNode(ctx, ns+"-a", documented("1G", "300M", "400M"))
		makeNode(ctx, ns+"-b", documented("1G", "300M", "400M"))
		bb := localBB(ns, "labels", 2)
		Expect(k8s.Create(ctx, bb)).To(Succeed())

		// Stage 1 is there while the prepare pods have not even run.
		Eventually(condition(ctx, bb, v1alpha1.ConditionLimitsEstimated), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonEstimated))
		cur := get(ctx, bb)
		Expect(cur.Status.Nodes[0].Prepared).To(BeFalse())
		est := cur.Status.Limits.Estimated
		Expect(est.Write.LimitBytesPerSecond).To(Equal(int64(600e6)))
		Expect(est.Write.Bottleneck).To(Equal("devices"))
		Expect(est.Write.NetworkBytesPerSecond).To(BeNil(), "no data crosses the network with the local engine")
		Expect(est.Read.LimitBytesPerSecond).To(Equal(int64(800e6)))
		Expect(est.Write.Formula).NotTo(BeEmpty())
		Expect(est.Sources).To(ContainElement(v1alpha1.FigureSource{Figure: "devices.write", Source: v1alpha1.SourceLabel, Value: "300M"}))
		Expect(cur.Status.Summary.WriteLimit).To(Equal("600 MB/s"))
		Expect(cur.Status.Summary.Bottleneck).To(Equal("devices"))
	})

	It("prefers spec figures to labels, takes the slowest node's label, and says where each came from", func() {
		makeNode(ctx, ns+"-a", documented("10G", "2G", "3G"))
		makeNode(ctx, ns+"-b", documented("10G", "1G", "3G"))
		bb := localBB(ns, "mixed", 2)
		bb.Spec.Hardware = &v1alpha1.HardwareSpec{Devices: &v1alpha1.DevicesHardware{PerNode: 1, ReadBytesPerSecond: ptr.To(resource.MustParse("5G"))}}
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Eventually(condition(ctx, bb, v1alpha1.ConditionLimitsEstimated), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonEstimated))
		est := get(ctx, bb).Status.Limits.Estimated
		Expect(est.Write.LimitBytesPerSecond).To(Equal(int64(2e9)), "2 nodes x the slowest label, 1G")
		Expect(est.Read.LimitBytesPerSecond).To(Equal(int64(10e9)), "2 nodes x spec's 5G")
		Expect(est.Sources).To(ContainElements(
			v1alpha1.FigureSource{Figure: "devices.read", Source: v1alpha1.SourceSpec, Value: "5G"},
			v1alpha1.FigureSource{Figure: "devices.write", Source: v1alpha1.SourceLabel, Value: "1G"},
		))
	})

	It("says the limit is unknown, not zero, when no figure is documented", func() {
		makeNode(ctx, ns+"-a", map[string]string{"pool": ns})
		bb := localBB(ns, "bare", 1)
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Eventually(condition(ctx, bb, v1alpha1.ConditionLimitsEstimated), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonHardwareUnknown))
		cur := get(ctx, bb)
		Expect(cur.Status.Summary.WriteLimit).To(Equal("unknown"))
		Expect(cur.Status.Warnings).To(ContainElement(HaveField("Reason", v1alpha1.WarningUnknownLimit)))
	})

	It("computes the co-located BeeGFS case from spec.hardware", func() {
		makeNode(ctx, ns+"-a", map[string]string{"pool": ns})
		makeNode(ctx, ns+"-b", map[string]string{"pool": ns})
		bb := localBB(ns, "coloc", 2)
		bb.Spec.Engine = v1alpha1.EngineBeeGFS
		link := &v1alpha1.LinkHardware{RateBitsPerSecond: resource.MustParse("100G"), Encoding: v1alpha1.Encoding64b66b}
		bb.Spec.Hardware = &v1alpha1.HardwareSpec{Clients: &v1alpha1.ClientsHardware{Link: link}, Colocated: ptr.To(true),
			Devices: &v1alpha1.DevicesHardware{PerNode: 1, WriteBytesPerSecond: ptr.To(resource.MustParse("3G")), ReadBytesPerSecond: ptr.To(resource.MustParse("6G"))}}
		Expect(k8s.Create(ctx, bb)).To(Succeed())
		Eventually(condition(ctx, bb, v1alpha1.ConditionLimitsEstimated), timeout).Should(haveStatus(metav1.ConditionTrue, v1alpha1.ReasonEstimated))
		est := get(ctx, bb).Status.Limits.Estimated
		Expect(est.Write.Bottleneck).To(Equal("devices"))
		Expect(est.Write.LimitBytesPerSecond).To(Equal(int64(6e9)))
		Expect(*est.Write.NetworkBytesPerSecond).To(BeNumerically(">", int64(24e9)), "2 x 12.12 GB/s x Ns/(Ns-1)")
		Expect(est.Write.Formula).To(ContainSubstring("(Ns-1)/Ns"))
	})
})
