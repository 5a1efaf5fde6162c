// Package aa has no tests: `go test ./...` prints "?   ... [no test
// files]" for it, first.
package aa

// One is here so that the package is not empty.
func One() int { return 1 }
