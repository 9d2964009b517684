// Package gomegadesc holds a repository check (see its test): Gomega assertion descriptions
// are never format strings by accident.
package gomegadesc
