package main

import (
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// version is the release this plugin was built as: `make build`, hack/krew-release.sh and the
// release workflow set it with -ldflags "-X main.version=vX.Y.Z" (the Makefile's VERSION, the
// same one the images and the chart carry).
var version = "dev"

// versionInfo is what `version -o json|yaml` prints.
type versionInfo struct {
	Version   string `json:"version"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

func newVersionCommand() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "version [-o json|yaml]",
		Short: "Print the plugin's version",
		Long: `version prints the release this plugin was built as. The operator of the same release runs
the images tagged with it (kubectl -n beeburst-system get deploy beeburst-manager -o
jsonpath='{.spec.template.spec.containers[0].image}').`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := versionInfo{Version: version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
			var (
				b   []byte
				err error
			)
			switch output {
			case "":
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "kubectl-beeburst %s (%s, %s)\n", info.Version, info.GoVersion, info.Platform)
				if err != nil {
					return runtimeError{fmt.Errorf("writing the output: %w", err)}
				}
				return nil
			case "json":
				b, err = json.MarshalIndent(info, "", "  ")
				b = append(b, '\n')
			case "yaml":
				b, err = yaml.Marshal(info)
			default:
				return fmt.Errorf("--output must be json or yaml (or absent), not %q", output)
			}
			if err != nil {
				return runtimeError{err}
			}
			if _, err := cmd.OutOrStdout().Write(b); err != nil {
				return runtimeError{fmt.Errorf("writing the output: %w", err)}
			}
			return nil
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "json or yaml; the default is one line")
	_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}
