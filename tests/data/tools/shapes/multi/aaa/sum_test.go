// sum_test.go: five benchmarks (Sum also in package bbb, with the same
// name), a test for `-v` to run, and a benchmark that logs.
package aaa

import "testing"

var sink int

func add(n int) int {
	s := 0
	for j := 0; j < n; j++ {
		s += j
	}
	return s
}

func TestAdd(t *testing.T) {
	if add(3) != 3 {
		t.Fatal("add(3) != 3")
	}
}

func BenchmarkSum(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink = add(100)
	}
}

func BenchmarkCopy(b *testing.B) {
	src := make([]byte, 256)
	dst := make([]byte, 256)
	for i := 0; i < b.N; i++ {
		copy(dst, src)
	}
	b.Log("copied", len(dst), "bytes")
}

func BenchmarkFill(b *testing.B) {
	buf := make([]byte, 256)
	for i := 0; i < b.N; i++ {
		for j := range buf {
			buf[j] = byte(j)
		}
	}
}

func BenchmarkScan(b *testing.B) {
	buf := make([]byte, 256)
	for i := 0; i < b.N; i++ {
		n := 0
		for _, c := range buf {
			n += int(c)
		}
		sink = n
	}
}

func BenchmarkAlloc(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink = len(make([]byte, 64))
	}
}
