// A CUDA build registers cuda.flash and cuda.vendor even where no GPU is
// present; they then report unavailable with a reason, and the dispatcher
// rejects them with that reason instead of failing at run time.
#include <gtest/gtest.h>

#include "tessera/dispatcher.h"

#if TESSERA_HAVE_CUDA
#include "runtime/cuda/cuda_runtime.h"
#endif

namespace tessera {
namespace {

#if TESSERA_HAVE_CUDA
TEST(CudaRegistration, BothBackendsRegisteredWithHonestAvailability) {
  Registry registry;
  register_builtin_backends(registry);
  std::string why;
  const bool gpu = cuda::device_available(0, &why);
  for (const char* name : {"cuda.flash", "cuda.vendor"}) {
    Backend* b = registry.find(name);
    ASSERT_NE(b, nullptr) << name << " not registered in a CUDA build";
    EXPECT_EQ(b->device(), Device::cuda(0));
    const Availability av = b->availability();
    EXPECT_EQ(av.available, gpu) << name;
    if (!gpu) {
      EXPECT_FALSE(av.reason.empty()) << name;
      EXPECT_EQ(av.reason, why);
    }
  }
  if (gpu) GTEST_SKIP() << "a GPU is present: the unavailable path is not exercised here";
  // explain() names the reason for each CUDA backend.
  std::vector<uint16_t> buf(64);
  AttentionArgs a;
  a.q = TensorView::contiguous(buf.data(), DType::kBF16, {1, 4, 2, 8}, Device::cuda(0));
  a.k = a.v = a.out = a.q;
  Dispatcher dispatcher(registry);
  Context ctx;
  const Explanation ex = dispatcher.explain(a, ctx);
  int seen = 0;
  for (const auto& v : ex.verdicts) {
    if (v.name.rfind("cuda.", 0) != 0) continue;
    ++seen;
    ASSERT_FALSE(v.reasons.empty());
    EXPECT_NE(v.reasons[0].find("unavailable: "), std::string::npos) << v.reasons[0];
  }
  EXPECT_EQ(seen, 2);
  EXPECT_TRUE(ex.chosen.empty()) << "CPU backends must reject cuda tensors, chose " << ex.chosen;
}
#else
TEST(CudaRegistration, CpuOnlyBuildHasNoCudaBackends) {
  Registry registry;
  register_builtin_backends(registry);
  EXPECT_EQ(registry.find("cuda.flash"), nullptr);
  EXPECT_EQ(registry.find("cuda.vendor"), nullptr);
}
#endif

}  // namespace
}  // namespace tessera
