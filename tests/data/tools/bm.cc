// bm.cc: a tiny Google Benchmark program for tests/data/import_tools.sh:
// two ways to copy 256 bytes, and one benchmark that fails.
#include <benchmark/benchmark.h>

#include <cstring>

static void BM_memcpy(benchmark::State &state) {
  char src[256], dst[256];
  std::memset(src, 'x', sizeof src);
  for (auto _ : state) {
    std::memcpy(dst, src, sizeof src);
    benchmark::DoNotOptimize(dst);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * 256);
}

static void BM_loop(benchmark::State &state) {
  char src[256], dst[256];
  std::memset(src, 'x', sizeof src);
  for (auto _ : state) {
    for (int i = 0; i < 256; i++) {
      dst[i] = src[i];
      benchmark::ClobberMemory();
    }
  }
  state.counters["copies"] =
      benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
}

static void BM_fails(benchmark::State &state) {
  for (auto _ : state)
    state.SkipWithError("no input file");
}

BENCHMARK(BM_memcpy);
BENCHMARK(BM_loop)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_fails);
BENCHMARK_MAIN();
