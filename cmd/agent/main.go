// Command agent runs inside beeburst's probe and benchmark pods (stages 2-4 of METHOD.md) and
// on one machine (`agent run`). See `agent --help`.
package main

import "os"

func main() { os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr)) }
