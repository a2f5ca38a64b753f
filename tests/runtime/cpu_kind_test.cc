#include "runtime/cpu_kind.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "runtime/cpu_features.h"

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
  // The detected kind: cpu_kind() answers for TESSERA_CPU_CAP when one is set.
  const CpuKind k = detected_cpu_kind();
  const bool avx2 = has_flag(flags, "avx2") && has_flag(flags, "fma");
  const bool avx512 =
      has_flag(flags, "avx512f") && has_flag(flags, "avx512bw") && has_flag(flags, "avx512vl");
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

// A Zen 4 as CPUID reports it: AVX-512 with VNNI and BF16, no AMX.
CpuFeatures zen4() {
  CpuFeatures f;
  f.avx2_fma = f.avx512 = f.avx512_vnni = f.avx512_bf16 = f.amd = true;
  return f;
}

// A Sapphire Rapids: everything, AVX-VNNI and AMX included.
CpuFeatures sapphire_rapids() {
  CpuFeatures f;
  f.avx2_fma = f.avx512 = f.avx512_vnni = f.avx512_bf16 = f.avx_vnni = f.amx = f.amx_int8 = true;
  return f;
}

TEST(CpuCap, LowersTheFeaturesToTheKinds) {
  const CpuFeatures avx2 = capped_features(sapphire_rapids(), CpuKind::kAvx2);
  EXPECT_TRUE(avx2.avx2_fma);
  EXPECT_FALSE(avx2.avx512 || avx2.avx512_vnni || avx2.avx_vnni || avx2.avx512_bf16 || avx2.amx ||
               avx2.amx_int8);
  EXPECT_EQ(kind_of(avx2), CpuKind::kAvx2);

  // AVX-512 without the dot products: what an Ice Lake or Skylake-SP runs
  // once VNNI is gone too.
  const CpuFeatures avx512 = capped_features(zen4(), CpuKind::kAvx512);
  EXPECT_TRUE(avx512.avx512);
  EXPECT_FALSE(avx512.avx512_vnni || avx512.avx512_bf16);
  EXPECT_EQ(kind_of(avx512), CpuKind::kAvx512);

  const CpuFeatures bf16 = capped_features(sapphire_rapids(), CpuKind::kAvx512Bf16Intel);
  EXPECT_TRUE(bf16.avx512_bf16 && bf16.avx512_vnni);
  EXPECT_FALSE(bf16.amx || bf16.amx_int8);
  EXPECT_EQ(kind_of(bf16), CpuKind::kAvx512Bf16Intel);

  EXPECT_EQ(kind_of(capped_features(zen4(), CpuKind::kGeneric)), CpuKind::kGeneric);
  // A cap at the CPU's own kind changes nothing.
  const CpuFeatures same = capped_features(sapphire_rapids(), CpuKind::kAmx);
  EXPECT_TRUE(same.amx && same.avx_vnni && same.amx_int8);
}

TEST(CpuCap, RefusesACapAboveTheCpuOrOfTheOtherVendor) {
  CpuFeatures zen3;
  zen3.avx2_fma = zen3.amd = true;
  EXPECT_EQ(cpu_cap_refusal(CpuKind::kAvx2, zen3), "");
  EXPECT_EQ(cpu_cap_refusal(CpuKind::kGeneric, zen3), "");
  const std::string above = cpu_cap_refusal(CpuKind::kAvx512, zen3);
  EXPECT_NE(above.find("above the CPU"), std::string::npos) << above;
  EXPECT_NE(above.find("x86-avx2"), std::string::npos) << above;
  EXPECT_NE(cpu_cap_refusal(CpuKind::kAmx, zen4()), "");
  EXPECT_EQ(cpu_cap_refusal(CpuKind::kAvx512Bf16Amd, zen4()), "");
  EXPECT_NE(cpu_cap_refusal(CpuKind::kAvx512Bf16Intel, zen4()).find("other vendor"),
            std::string::npos);
  EXPECT_EQ(cpu_cap_refusal(CpuKind::kAvx512Bf16Intel, sapphire_rapids()), "");
  EXPECT_NE(cpu_cap_refusal(CpuKind::kAvx512Bf16Amd, sapphire_rapids()), "");
}

// The process's own cap (set for the whole run by scripts/test.sh's capped
// pass): the kind is the cap's, and nothing above it is reported usable.
TEST(CpuCap, TheProcessAnswersForItsCap) {
  CpuKind cap = CpuKind::kGeneric;
  if (!cpu_cap(&cap)) {
    EXPECT_EQ(cpu_kind(), detected_cpu_kind());
    const char* value = std::getenv(kCpuCapVariable);
    EXPECT_EQ(cpu_cap_status().ok(), value == nullptr || *value == '\0')
        << cpu_cap_status().message();
    return;
  }
  EXPECT_TRUE(cpu_cap_status().ok());
  EXPECT_EQ(cpu_kind(), kind_of(capped_features(detected_cpu_features(), cap)));
  const CpuFeatures& f = cpu_features();
  const CpuFeatures& real = detected_cpu_features();
  EXPECT_LE(f.avx512, real.avx512);
  EXPECT_LE(f.avx512_bf16, real.avx512_bf16);
  EXPECT_LE(f.amx, real.amx);
  if (cap == CpuKind::kAvx2) {
    EXPECT_FALSE(f.avx512 || f.avx512_vnni || f.avx512_bf16 || f.amx);
  }
  EXPECT_NE(cpu_kind_description().find(kCpuCapVariable), std::string::npos);
}

}  // namespace
}  // namespace tessera
