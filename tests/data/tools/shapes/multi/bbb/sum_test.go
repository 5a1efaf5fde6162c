// sum_test.go: a Sum benchmark of the same name as package aaa's, a
// hundred times the work.
package bbb

import "testing"

var sink int

func BenchmarkSum(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s := 0
		for j := 0; j < 10000; j++ {
			s += j
		}
		sink = s
	}
}
