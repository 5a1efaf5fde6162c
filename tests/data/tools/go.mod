// go.mod: the module of fib_test.go; no dependencies, so that the test
// builds offline.
module example.com/fib

go 1.19
