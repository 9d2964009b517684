package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/hardware"
	"github.com/beeburst/beeburst/internal/limits"
)

// newLimitsCommand prints a live burst buffer's limits, stage beside stage, with the same
// table as `estimate`.
func newLimitsCommand() *cobra.Command {
	var kubeconfig, namespace, output string
	c := &cobra.Command{
		Use:   "limits NAME [-n NAMESPACE] [-o table|json]",
		Short: "print a burst buffer's published limits: stage 1 (estimated) to stage 4 (monitoring)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rules := clientcmd.NewDefaultClientConfigLoadingRules()
			if kubeconfig != "" {
				rules.ExplicitPath = kubeconfig
			}
			cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
			cfg, err := cc.ClientConfig()
			if err != nil {
				return runtimeError{fmt.Errorf("kubeconfig: %w", err)}
			}
			if namespace == "" {
				if namespace, _, err = cc.Namespace(); err != nil {
					return runtimeError{err}
				}
			}
			scheme := runtime.NewScheme()
			if err := v1alpha1.AddToScheme(scheme); err != nil {
				return runtimeError{err}
			}
			k, err := client.New(cfg, client.Options{Scheme: scheme})
			if err != nil {
				return runtimeError{err}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var bb v1alpha1.BurstBuffer
			if err := k.Get(ctx, client.ObjectKey{Namespace: namespace, Name: args[0]}, &bb); err != nil {
				return runtimeError{err}
			}
			rep := hardware.ReportFromStatus(&bb)
			if output == "json" {
				b, err := json.MarshalIndent(rep.Document(bb.Name), "", "  ")
				if err != nil {
					return runtimeError{err}
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b)
				return err
			}
			if output != "table" {
				return fmt.Errorf("-o must be table or json, not %q", output)
			}
			if err := limits.WriteTable(cmd.OutOrStdout(), rep); err != nil {
				return runtimeError{err}
			}
			return nil
		},
	}
	c.Flags().StringVar(&kubeconfig, "kubeconfig", "", "path to the kubeconfig (default: $KUBECONFIG or ~/.kube/config)")
	c.Flags().StringVarP(&namespace, "namespace", "n", "", "namespace of the burst buffer (default: the kubeconfig's)")
	c.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	return c
}
