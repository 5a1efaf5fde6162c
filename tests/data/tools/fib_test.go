// fib_test.go: a tiny Go benchmark package for tests/data/import_tools.sh:
// Fibonacci by recursion and by a loop, and sub-benchmarks by size.
package fib

import (
	"strconv"
	"testing"
)

func fibRec(n int) int {
	if n < 2 {
		return n
	}
	return fibRec(n-1) + fibRec(n-2)
}

func fibLoop(n int) int {
	a, b := 0, 1
	for i := 0; i < n; i++ {
		a, b = b, a+b
	}
	return a
}

var sink int

func BenchmarkFibRec(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink = fibRec(15)
	}
}

func BenchmarkFibLoop(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink = fibLoop(15)
	}
	b.ReportMetric(15, "terms/op")
}

func BenchmarkSizes(b *testing.B) {
	for _, n := range []int{5, 20} {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				sink = fibLoop(n)
			}
		})
	}
}
