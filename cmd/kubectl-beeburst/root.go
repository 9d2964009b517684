package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Exit codes: 0 success, 1 a failure that is not the input's fault (writing the output),
// 2 invalid input (flags, files, figures) - the code kubectl uses for usage errors.
const (
	exitOK      = 0
	exitFailure = 1
	exitInvalid = 2
)

// runtimeError marks an error that is not the input's fault (exit code 1); every other error
// is invalid input (exit code 2).
type runtimeError struct{ err error }

func (e runtimeError) Error() string { return e.err.Error() }
func (e runtimeError) Unwrap() error { return e.err }

// run is main without os.Exit.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runWith(args, stdin, stdout, stderr, newClient)
}

// runWith is run with the limits command's client factory, for tests.
func runWith(args []string, stdin io.Reader, stdout, stderr io.Writer, nc newClientFunc) int {
	root := newRootCommand(stdin, nc)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "error: %v\n", err)
	var rt runtimeError
	if errors.As(err, &rt) {
		return exitFailure
	}
	return exitInvalid
}

func newRootCommand(stdin io.Reader, nc newClientFunc) *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-beeburst",
		Short: "beeburst's kubectl plugin: burst buffer limits",
		Long: `kubectl beeburst works with beeburst burst buffers and the performance limits the
operator publishes for them (the staged limit method: theory, components, sweep, monitoring).`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Help and usage say "kubectl beeburst", as a kubectl plugin is called.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl beeburst"},
	}
	// --version without cobra's -v shorthand: -v is kubectl's log level.
	root.Flags().Bool("version", false, "print the plugin's version")
	// `completion bash|zsh|fish|powershell` is cobra's default command: it completes the
	// kubectl-beeburst binary; `kubectl beeburst <TAB>` needs kubectl_complete-beeburst on
	// the PATH (docs/install.md).
	root.AddCommand(newEstimateCommand(stdin), newLimitsCommand(nc), newVersionCommand())
	return root
}
