// gemm_probe: the GEMM libraries Debian offers, on the products standard
// attention makes per head, so docs/DECISIONS.md can say which one cpu.gemm
// uses and how to thread it, with numbers from this machine.
//   QK: scores[Sq, Sk] = Q[Sq, D] * K[Sk, D]^T     (M=Sq, N=Sk, K=D)
//   PV: out[Sq, Dv]    = P[Sq, Sk] * V[Sk, Dv]     (M=Sq, N=Dv, K=Sk)
// For each: one GEMM on 1 thread, one GEMM on N library threads, and N
// independent GEMMs at once on 1 thread each (how cpu.gemm runs heads).
// The environment is used as it is (OPENBLAS_CORETYPE included).
#include <cblas.h>
#include <dnnl.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kRepeats = 5;

struct Product {
  const char* name;
  int64_t m, n, k;
  bool trans_b;
};

// The attention shapes S1..S5 of the benchmark table, per head.
constexpr Product kProducts[] = {
    {"S1 QK 512x512x64", 512, 512, 64, true},       {"S1 PV 512x64x512", 512, 64, 512, false},
    {"S2 QK 4096x4096x64", 4096, 4096, 64, true},   {"S2 PV 4096x64x4096", 4096, 64, 4096, false},
    {"S3 QK 4096x4096x128", 4096, 4096, 128, true}, {"S3 PV 4096x128x4096", 4096, 128, 4096, false},
    {"S4 QK 4x8192x128", 4, 8192, 128, true},       {"S4 PV 4x128x8192", 4, 128, 8192, false},
    {"S5 QK 256x256x32", 256, 256, 32, true},       {"S5 PV 256x32x256", 256, 32, 256, false},
};

struct Operands {
  std::vector<float> a, b, c;
  explicit Operands(const Product& p)
      : a(p.m * p.k, 0.5f), b(p.n * p.k, 0.25f), c(p.m * p.n, 0.0f) {}
};

using Gemm = std::function<void(const Product&, Operands&)>;

void dnnl_call(const Product& p, Operands& o) {
  const int64_t ldb = p.trans_b ? p.k : p.n;
  dnnl_sgemm('N', p.trans_b ? 'T' : 'N', p.m, p.n, p.k, 1.0f, o.a.data(), p.k, o.b.data(), ldb,
             0.0f, o.c.data(), p.n);
}

void openblas_call(const Product& p, Operands& o) {
  const int ldb = static_cast<int>(p.trans_b ? p.k : p.n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, p.trans_b ? CblasTrans : CblasNoTrans,
              static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k), 1.0f, o.a.data(),
              static_cast<int>(p.k), o.b.data(), ldb, 0.0f, o.c.data(), static_cast<int>(p.n));
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Median GFLOP/s of `copies` products run at once, one per thread, each
// library call allowed `lib_threads` threads.
double measure(const Product& p, const Gemm& gemm, int copies, int lib_threads,
               void (*set_threads)(int)) {
  std::vector<Operands> ops;
  for (int c = 0; c < copies; ++c) ops.emplace_back(p);
  const double flops = 2.0 * p.m * p.n * p.k * copies;
  // Enough calls per sample for ~50 ms of work at 50 GFLOP/s.
  const int calls = std::max(1, static_cast<int>(2.5e9 / flops));
  std::vector<double> rates;
  for (int r = 0; r <= kRepeats; ++r) {
    std::vector<std::thread> threads;
    const double t0 = now_s();
    for (int c = 0; c < copies; ++c) {
      threads.emplace_back([&, c] {
        set_threads(lib_threads);
        for (int i = 0; i < calls; ++i) gemm(p, ops[c]);
      });
    }
    for (auto& t : threads) t.join();
    if (r > 0) rates.push_back(flops * calls / (now_s() - t0) / 1e9);  // r = 0 warms up
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

void dnnl_threads(int n) { omp_set_num_threads(n); }
void openblas_threads(int n) { openblas_set_num_threads(n); }

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1])
                         : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  std::printf("OPENBLAS_CORETYPE=%s  openblas core: %s  threads N=%d\n",
              coretype ? coretype : "(unset)", openblas_get_corename(), n);
  std::printf("%-22s %-9s %10s %10s %10s   GFLOP/s (median of %d)\n", "product", "library", "1 thr",
              "1 x N thr", "N x 1 thr", kRepeats);
  const struct {
    const char* name;
    Gemm gemm;
    void (*set_threads)(int);
  } libs[] = {{"oneDNN", dnnl_call, dnnl_threads}, {"OpenBLAS", openblas_call, openblas_threads}};
  for (const Product& p : kProducts) {
    for (const auto& lib : libs) {
      std::printf("%-22s %-9s %10.1f %10.1f %10.1f\n", p.name, lib.name,
                  measure(p, lib.gemm, 1, 1, lib.set_threads),
                  measure(p, lib.gemm, 1, n, lib.set_threads),
                  measure(p, lib.gemm, n, 1, lib.set_threads));
    }
  }
  return 0;
}
