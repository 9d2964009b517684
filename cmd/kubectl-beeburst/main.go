// Command kubectl-beeburst is the beeburst kubectl plugin: `kubectl beeburst estimate` previews
// a burst buffer's performance limits from its hardware before anything is created.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
