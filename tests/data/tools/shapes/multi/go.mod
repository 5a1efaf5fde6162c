// go.mod: the module of tests/data/import_shapes.sh: two packages with
// benchmarks of the same name and one without tests; no dependencies, so
// that it builds offline.
module example.com/multi

go 1.19
