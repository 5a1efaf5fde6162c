// bm_shapes.cc: Google Benchmark names of the shapes people have, for
// tests/data/import_shapes.sh: template instances whose names hold a
// comma and a blank (BM_Pair<int, float>), and a plain one.
#include <benchmark/benchmark.h>

#include <utility>

template <class A, class B> static void BM_Pair(benchmark::State &state) {
  for (auto _ : state) {
    std::pair<A, B> p(A(1), B(2));
    benchmark::DoNotOptimize(p);
  }
}

static void BM_plain(benchmark::State &state) {
  int x = 0;
  for (auto _ : state)
    benchmark::DoNotOptimize(x += 1);
}

BENCHMARK_TEMPLATE(BM_Pair, int, float);
BENCHMARK_TEMPLATE(BM_Pair, int, int);
BENCHMARK(BM_plain);
BENCHMARK_MAIN();
