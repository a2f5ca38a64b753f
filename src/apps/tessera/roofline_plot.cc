#include "roofline_plot.h"

// Through its folder, so a private prefix on CPATH finds it too
// (scripts/gpu-check.sh unpacks the packages there; plplot.pc names /usr).
#include <plplot/plplot.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string_view>

namespace tessera::cli {

namespace {

constexpr std::string_view kDevice = "pngcairo";  // plplot-driver-cairo
constexpr std::string_view kSuffix = ".png";

// cmap0 slots: PLplot draws the page in 0 and we pick the others by index.
enum Colour { kWhite, kBlack, kGrey, kFirstSeries };
// Backend colours (a colour-blind-safe qualitative palette), cycled.
constexpr int kSeries[][3] = {{0, 114, 178},  {230, 159, 0},  {0, 158, 115}, {204, 121, 167},
                              {213, 94, 0},   {86, 180, 233}, {120, 94, 240}, {100, 100, 100}};
constexpr int kNumSeries = sizeof(kSeries) / sizeof(kSeries[0]);
// Backend glyphs (DejaVu has them; pngcairo draws text with Pango), cycled
// independently of the colours so a colour-blind reader still tells them apart.
constexpr const char* kGlyphs[] = {"●", "■", "▲", "◆", "▼", "★", "⬟"};
constexpr int kNumGlyphs = sizeof(kGlyphs) / sizeof(kGlyphs[0]);
constexpr int kDashed = 2;  // pllsty's "long dashes"
// Page fractions: the plot on the left, the legends right of it.
constexpr double kPlotLeft = 0.06, kPlotRight = 0.52, kPlotBottom = 0.10, kPlotTop = 0.88;
constexpr double kLegendLeft = 0.55, kSampleWidth = 0.025;
// What fits right of the plot; a longer shape is cut with an ellipsis.
constexpr size_t kMaxKeyChars = 64;
constexpr double kTextScale = 0.6;  // of PLplot's default character height
constexpr double kLabelGap = 0.008;  // marker to its label, a fraction of the x range

bool has_device(std::string_view name) {
  // PLplot fills caller-owned arrays and lowers the count to what it has.
  const char* menus[128];
  const char* names[128];
  const char** menu_p = menus;
  const char** name_p = names;
  int n = 128;
  plgDevs(&menu_p, &name_p, &n);
  for (int i = 0; i < n; ++i) {
    if (name == names[i]) return true;
  }
  return false;
}

// '#' starts an escape sequence in PLplot text.
std::string plot_text(std::string_view s) {
  std::string out;
  for (char c : s) out += c == '#' ? "##" : std::string(1, c);
  return out;
}

std::string figure(double v, std::string_view unit) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f %s", v < 100 ? 1 : 0, v, std::string(unit).c_str());
  return buf;
}

struct Range {
  double lo = 0, hi = 0;  // log10, whole decades
};

Range decades(double lo, double hi) {
  return {std::floor(std::log10(lo)), std::ceil(std::log10(hi))};
}

struct LegendEntry {
  std::string text;
  int opt = PL_LEGEND_NONE;
  int colour = kBlack;
  int line_style = 1;
  std::string glyph;
};

// One legend box right of the plot, its top `y` below the page's top (page
// fractions), `sample_width` wide samples of line or glyph left of the texts
// (0 for text alone); returns its height.
double draw_legend(const std::vector<LegendEntry>& entries, double y, double sample_width) {
  const int n = static_cast<int>(entries.size());
  std::vector<PLINT> opts, colours, styles, numbers(n, 1), box_colours(n, 0), patterns(n, 0);
  std::vector<PLFLT> widths(n, 2.0), scales(n, 0.6), box_scales(n, 0), box_widths(n, 0);
  std::vector<const char*> texts, glyphs;
  for (const LegendEntry& e : entries) {
    opts.push_back(e.opt);
    colours.push_back(e.colour);
    styles.push_back(e.line_style);
    texts.push_back(e.text.c_str());
    glyphs.push_back(e.glyph.c_str());
  }
  PLFLT width = 0, height = 0;
  pllegend(&width, &height, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
           PL_POSITION_LEFT | PL_POSITION_TOP | PL_POSITION_INSIDE | PL_POSITION_SUBPAGE,
           kLegendLeft, y, sample_width, kWhite, kBlack, 1, 0, 0, n, opts.data(), 0.6, kTextScale, 2.2, 0.0,
           colours.data(),
           texts.data(), box_colours.data(), patterns.data(), box_scales.data(), box_widths.data(),
           colours.data(), styles.data(), widths.data(), colours.data(), scales.data(),
           numbers.data(), glyphs.data());
  return height;
}

// The roof from x0 to x1 (log10): the bandwidth slope, then the flat peak.
void draw_roof(double peak, double bandwidth, Range x, int style) {
  const double ridge = std::log10(peak / bandwidth);
  std::vector<PLFLT> xs = {x.lo}, ys = {std::log10(roof_gflops(peak, bandwidth, std::pow(10, x.lo)))};
  if (ridge > x.lo && ridge < x.hi) {
    xs.push_back(ridge);
    ys.push_back(std::log10(peak));
  }
  xs.push_back(x.hi);
  ys.push_back(std::log10(roof_gflops(peak, bandwidth, std::pow(10, x.hi))));
  pllsty(style);
  plwidth(2.0);
  plcol0(kBlack);
  plline(static_cast<PLINT>(xs.size()), xs.data(), ys.data());
  pllsty(1);
  plwidth(1.0);
}

void draw_chart(const RooflineChart& c) {
  const MachinePeaks& p = c.peaks;
  const double top_peak = std::max(p.fma_gflops, p.bf16_gflops.value_or(0));
  double x_lo = 0.1, x_hi = 10 * top_peak / p.triad_gbps, y_lo = p.triad_gbps * x_lo;
  double y_hi = 3 * top_peak;
  for (const RooflinePoint& pt : c.points) {
    if (pt.intensity <= 0 || pt.gflops <= 0) continue;
    x_lo = std::min(x_lo, pt.intensity / 2);
    x_hi = std::max(x_hi, pt.intensity * 2);
    y_lo = std::min(y_lo, pt.gflops / 2);
    y_hi = std::max(y_hi, pt.gflops * 2);
  }
  const Range x = decades(x_lo, x_hi), y = decades(y_lo, y_hi);

  pladv(0);
  plschr(0, kTextScale);
  plvpor(kPlotLeft, kPlotRight, kPlotBottom, kPlotTop);
  plwind(x.lo, x.hi, y.lo, y.hi);
  plcol0(kGrey);
  plbox("g", 0, 0, "g", 0, 0);
  plcol0(kBlack);
  plbox("bcnstl", 0, 0, "bcnstlv", 0, 0);
  pllab("arithmetic intensity (FLOP per ideal byte: q, k, v read once, out written once)",
        "GFLOP/s", "");
  plmtex("t", 3.2, 0.0, 0.0, plot_text(c.title).c_str());
  plmtex("t", 1.5, 0.0, 0.0, plot_text(c.peaks_note).c_str());

  draw_roof(p.fma_gflops, p.triad_gbps, x, 1);
  if (p.bf16_gflops) draw_roof(*p.bf16_gflops, p.triad_gbps, x, kDashed);

  // Markers: one colour and glyph per backend, in order of appearance.
  std::map<std::string, int> series;
  std::vector<LegendEntry> legend;
  plschr(0, 0.8 * kTextScale);
  for (const RooflinePoint& pt : c.points) {
    if (pt.intensity <= 0 || pt.gflops <= 0) continue;
    auto [it, added] = series.emplace(pt.backend, static_cast<int>(series.size()));
    const int colour = kFirstSeries + it->second % kNumSeries;
    const std::string glyph = kGlyphs[it->second % kNumGlyphs];
    if (added) legend.push_back({plot_text(pt.backend), PL_LEGEND_SYMBOL, colour, 1, glyph});
    PLFLT px = std::log10(pt.intensity), py = std::log10(pt.gflops);
    plcol0(colour);
    plstring(1, &px, &py, glyph.c_str());
    // The shape's number beside it; every other backend's on the left, so
    // two backends at the same speed do not hide each other's.
    const bool left = it->second % 2 == 1;
    plcol0(kBlack);
    plptex(px + (left ? -kLabelGap : kLabelGap) * (x.hi - x.lo), py, 1, 0, left ? 1.0 : 0.0,
           std::to_string(pt.shape).c_str());
  }
  plschr(0, kTextScale);

  legend.push_back({"roof: f32 FMA " + figure(p.fma_gflops, "GFLOP/s") + ", triad " +
                        figure(p.triad_gbps, "GB/s"),
                    PL_LEGEND_LINE, kBlack, 1, ""});
  if (p.bf16_gflops) {
    legend.push_back({"roof: bf16 dot product " + figure(*p.bf16_gflops, "GFLOP/s"),
                      PL_LEGEND_LINE, kBlack, kDashed, ""});
  } else {
    legend.push_back({plot_text(c.no_bf16_note), PL_LEGEND_NONE});
  }
  const double legend_height = draw_legend(legend, 1 - kPlotTop, kSampleWidth);

  std::vector<LegendEntry> key = {{"shapes (the number beside each marker):"}};
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    const std::string& text = c.shapes[i];
    const std::string cut = text.size() > kMaxKeyChars ? text.substr(0, kMaxKeyChars) + "…" : text;
    key.push_back({std::to_string(i + 1) + "  " + plot_text(cut)});
  }
  draw_legend(key, 1 - kPlotTop + legend_height + 0.03, 0);
}

}  // namespace

Status check_plot_path(const std::string& path) {
  if (std::filesystem::path(path).extension() != kSuffix) return invalid_argument("--plot: '" + path + "' must end in .png (a PNG is written)");
  std::error_code ec;
  const bool existed = std::filesystem::exists(path, ec);
  // Append mode: an existing file keeps its bytes until the plot replaces them.
  std::FILE* f = std::fopen(path.c_str(), "ab");
  if (f == nullptr) {
    return invalid_argument("--plot: cannot write '" + path + "': " + std::strerror(errno));
  }
  std::fclose(f);
  if (!existed) std::filesystem::remove(path, ec);
  return Status::Ok();
}

Status write_roofline_png(const RooflineChart& chart, const std::string& path) {
  if (Status s = check_plot_path(path); !s.ok()) return s;
  if (chart.peaks.fma_gflops <= 0 || chart.peaks.triad_gbps <= 0) {
    return invalid_argument("--plot: the roofline needs an FMA peak and a triad bandwidth > 0");
  }
  // PLplot ends the process on an unknown device, so ask first.
  if (!has_device(kDevice)) {
    return unavailable("--plot: PLplot has no '" + std::string(kDevice) +
                       "' device (install plplot-driver-cairo: scripts/install-deps.sh)");
  }
  plsdev(std::string(kDevice).c_str());
  plsfnam(path.c_str());
  plspage(0, 0, kRooflineWidth, kRooflineHeight, 0, 0);
  plscol0(kWhite, 255, 255, 255);
  plscol0(kBlack, 0, 0, 0);
  plscol0(kGrey, 215, 215, 215);
  for (int i = 0; i < kNumSeries; ++i) {
    plscol0(kFirstSeries + i, kSeries[i][0], kSeries[i][1], kSeries[i][2]);
  }
  plinit();
  draw_chart(chart);
  plend();
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) == 0 || ec) {
    return internal_error("--plot: PLplot wrote nothing to '" + path + "'");
  }
  return Status::Ok();
}

}  // namespace tessera::cli
