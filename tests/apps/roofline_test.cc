// `bench attention --plot` and `--peaks`: the option's parser and its errors,
// the PNG the plot writes (signature, IHDR size, not trivially small), and
// the path checks that run before anything is measured.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "apps/tessera/peaks_option.h"
#include "apps/tessera/roofline_plot.h"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

TEST(PeaksOption, ParsesTheThreeFields) {
  MachinePeaks p;
  ASSERT_TRUE(parse_peaks_option("fma=165.5,triad=15,bf16=330", &p).ok());
  EXPECT_DOUBLE_EQ(p.fma_gflops, 165.5);
  EXPECT_DOUBLE_EQ(p.triad_gbps, 15);
  ASSERT_TRUE(p.bf16_gflops.has_value());
  EXPECT_DOUBLE_EQ(*p.bf16_gflops, 330);
}

TEST(PeaksOption, Bf16IsOptionalAndOrderFree) {
  MachinePeaks p;
  p.bf16_gflops = 1;  // overwritten: absent in the text
  ASSERT_TRUE(parse_peaks_option("triad=40,fma=4.35e2", &p).ok());
  EXPECT_DOUBLE_EQ(p.fma_gflops, 435);
  EXPECT_DOUBLE_EQ(p.triad_gbps, 40);
  EXPECT_FALSE(p.bf16_gflops.has_value());
}

// Each bad text and what its error must name.
struct BadPeaks {
  const char* text;
  const char* names;
};

TEST(PeaksOption, ErrorsNameTheField) {
  const BadPeaks cases[] = {
      {"fma=abc,triad=15", "field 'fma' must be a number > 0, not 'abc'"},
      {"fma=100,triad=", "field 'triad' must be a number > 0, not ''"},
      {"fma=100,triad=15,bf16=-3", "field 'bf16' must be a number > 0, not '-3'"},
      {"fma=0,triad=15", "field 'fma' must be a number > 0"},
      {"fma=inf,triad=15", "field 'fma' must be a number > 0"},
      {"fma=nan,triad=15", "field 'fma' must be a number > 0"},
      {"fma=100x,triad=15", "field 'fma' must be a number > 0, not '100x'"},
      {"fma=100", "field 'triad' is missing"},
      {"triad=15", "field 'fma' is missing"},
      {"", "field 'fma' is missing"},
      {"fma=1,fma=2,triad=3", "field 'fma' is given twice"},
      {"fma=1,triad=3,amx=9", "field 'amx' is unknown"},
      {"fma=1,triad3", "'triad3' is not NAME=VALUE"},
      {"fma=1,,triad=3", "'' is not NAME=VALUE"},
  };
  for (const BadPeaks& c : cases) {
    MachinePeaks p;
    const Status s = parse_peaks_option(c.text, &p);
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_NE(s.message().find("--peaks"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(c.names), std::string::npos) << c.text << " -> " << s.message();
  }
}

class RooflinePng : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessera_roofline_" + std::string(
                ::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static RooflineChart chart() {
    RooflineChart c;
    c.title = "test machine, 2 threads, 2026-01-01";
    c.peaks_note = "peaks given by the test";
    c.peaks.fma_gflops = 160;
    c.peaks.triad_gbps = 15;
    c.no_bf16_note = "no bf16 ceiling given";
    c.shapes = {"B=8,S=512,H=12,D=64,dtype=f32", "B=1,Sq=1,Sk=8192,Hq=32,Hkv=8,D=128"};
    c.points = {{"cpu.flash", 1, 128, 60}, {"cpu.gemm", 1, 128, 40}, {"cpu.flash", 2, 2, 9},
                {"cpu.gemm", 2, 2, 12}, {"reference", 2, 2, 0.1}};
    return c;
  }

  static std::vector<uint8_t> read(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  }

  fs::path dir_;
};

uint32_t big_endian(const std::vector<uint8_t>& b, size_t at) {
  return uint32_t{b[at]} << 24 | uint32_t{b[at + 1]} << 16 | uint32_t{b[at + 2]} << 8 | b[at + 3];
}

TEST_F(RooflinePng, WritesAPngOfTheDeclaredSize) {
  const fs::path out = dir_ / "roof.png";
  const Status s = write_roofline_png(chart(), out.string());
  ASSERT_TRUE(s.ok()) << s.to_string();
  const std::vector<uint8_t> png = read(out);
  ASSERT_GT(png.size(), 24u);
  const std::vector<uint8_t> signature = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  EXPECT_EQ(std::vector<uint8_t>(png.begin(), png.begin() + 8), signature);
  // The first chunk is IHDR (13 bytes of data): width, then height.
  EXPECT_EQ(big_endian(png, 8), 13u);
  EXPECT_EQ(std::string(png.begin() + 12, png.begin() + 16), "IHDR");
  EXPECT_EQ(big_endian(png, 16), static_cast<uint32_t>(kRooflineWidth));
  EXPECT_EQ(big_endian(png, 20), static_cast<uint32_t>(kRooflineHeight));
  // Axes, text, legends and markers: far more than a blank page compresses to.
  EXPECT_GT(png.size(), 20'000u);
}

TEST_F(RooflinePng, TheBf16CeilingAndTheMarkersChangeThePicture) {
  const fs::path plain = dir_ / "plain.png", again = dir_ / "again.png";
  const fs::path bf16 = dir_ / "bf16.png", bare = dir_ / "bare.png";
  RooflineChart c = chart();
  ASSERT_TRUE(write_roofline_png(c, plain.string()).ok());
  ASSERT_TRUE(write_roofline_png(c, again.string()).ok());
  c.peaks.bf16_gflops = 320;
  ASSERT_TRUE(write_roofline_png(c, bf16.string()).ok());
  c = chart();
  c.points.clear();
  ASSERT_TRUE(write_roofline_png(c, bare.string()).ok());
  EXPECT_EQ(read(plain), read(again));  // deterministic, so the differences below mean something
  EXPECT_NE(read(plain), read(bf16));
  EXPECT_NE(read(plain), read(bare));
}

TEST_F(RooflinePng, ReplacesAnExistingFile) {
  const fs::path out = dir_ / "old.png";
  std::ofstream(out) << "not a png";
  ASSERT_TRUE(write_roofline_png(chart(), out.string()).ok());
  EXPECT_EQ(read(out)[1], 'P');
}

TEST_F(RooflinePng, RefusesASuffixOtherThanPng) {
  for (const char* name : {"roof.svg", "roof", "roof.png.txt", ".png"}) {
    const fs::path out = dir_ / name;
    const Status s = check_plot_path(out.string());
    ASSERT_FALSE(s.ok()) << name;
    EXPECT_NE(s.message().find("must end in .png"), std::string::npos) << s.message();
    EXPECT_FALSE(write_roofline_png(chart(), out.string()).ok()) << name;
    EXPECT_FALSE(fs::exists(out)) << name;
  }
}

TEST_F(RooflinePng, RefusesAnUnwritablePathNamingIt) {
  const std::string missing_dir = (dir_ / "no_such_dir" / "roof.png").string();
  const std::string a_dir = (dir_ / "folder.png").string();
  fs::create_directories(a_dir);
  for (const std::string& path : {missing_dir, a_dir}) {
    const Status s = write_roofline_png(chart(), path);
    ASSERT_FALSE(s.ok()) << path;
    EXPECT_NE(s.message().find("cannot write '" + path + "'"), std::string::npos) << s.message();
  }
  EXPECT_FALSE(fs::exists(dir_ / "no_such_dir"));
}

TEST_F(RooflinePng, CheckingAPathLeavesNoFileBehind) {
  const fs::path fresh = dir_ / "fresh.png", kept = dir_ / "kept.png";
  ASSERT_TRUE(check_plot_path(fresh.string()).ok());
  EXPECT_FALSE(fs::exists(fresh));
  std::ofstream(kept) << "old bytes";
  ASSERT_TRUE(check_plot_path(kept.string()).ok());
  EXPECT_EQ(fs::file_size(kept), 9u);
}

}  // namespace
}  // namespace tessera::cli
