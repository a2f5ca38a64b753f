#include "runtime/cpu_kind.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace tessera {
namespace {

// The flags line of /proc/cpuinfo, so the detected kind is checked against
// what the kernel reports rather than against CPUID a second time.
std::string cpu_flags() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("flags", 0) == 0) return line + " ";
  }
  return "";
}

bool has_flag(const std::string& flags, const std::string& flag) {
  return flags.find(" " + flag + " ") != std::string::npos;
}

TEST(CpuKind, NamesRoundTrip) {
  for (CpuKind k : {CpuKind::kGeneric, CpuKind::kAvx2, CpuKind::kAvx512, CpuKind::kAvx512Bf16Amd,
                    CpuKind::kAvx512Bf16Intel, CpuKind::kAmx}) {
    CpuKind back = CpuKind::kGeneric;
    ASSERT_TRUE(parse_cpu_kind(cpu_kind_name(k), &back)) << cpu_kind_name(k);
    EXPECT_EQ(back, k);
  }
  CpuKind untouched = CpuKind::kAvx2;
  EXPECT_FALSE(parse_cpu_kind("x86-avx3", &untouched));
  EXPECT_EQ(untouched, CpuKind::kAvx2);
}

TEST(CpuKind, AgreesWithTheKernelsFlags) {
  const std::string flags = cpu_flags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags line on this platform";
  const CpuKind k = cpu_kind();
  const bool avx2 = has_flag(flags, "avx2") && has_flag(flags, "fma");
  const bool avx512 = has_flag(flags, "avx512f") && has_flag(flags, "avx512bw") &&
                      has_flag(flags, "avx512vl");
  const bool bf16 = has_flag(flags, "avx512_bf16");
  const bool amx = has_flag(flags, "amx_bf16") && has_flag(flags, "amx_tile");
  SCOPED_TRACE(std::string("detected ") + std::string(cpu_kind_name(k)));
  if (!avx2) {
    EXPECT_EQ(k, CpuKind::kGeneric);
  } else if (!avx512) {
    EXPECT_EQ(k, CpuKind::kAvx2);
  } else if (!bf16) {
    EXPECT_EQ(k, CpuKind::kAvx512);
  } else if (amx) {
    EXPECT_EQ(k, CpuKind::kAmx);
  } else {
    EXPECT_TRUE(k == CpuKind::kAvx512Bf16Amd || k == CpuKind::kAvx512Bf16Intel);
  }
}

}  // namespace
}  // namespace tessera
