// Command pause is the sandbox ("infra") container of the testbed's pods: it holds the pod's
// namespaces open and sleeps until it is told to stop. As PID 1 of the sandbox it also reaps
// orphans. It replaces registry.k8s.io/pause, which cannot be pulled on our machines.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s == syscall.SIGCHLD {
			for {
				var ws syscall.WaitStatus
				pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
			continue
		}
		os.Exit(0)
	}
}
