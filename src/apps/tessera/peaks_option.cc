#include "peaks_option.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <string>

namespace tessera::cli {

namespace {

Status field_error(std::string_view field, std::string_view what) {
  return invalid_argument("--peaks: field '" + std::string(field) + "' " + std::string(what) +
                          " (expected fma=GFLOPS,triad=GBS[,bf16=GFLOPS])");
}

Status parse_value(std::string_view field, std::string_view text, std::optional<double>* out) {
  if (out->has_value()) return field_error(field, "is given twice");
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) || v <= 0) {
    return field_error(field, "must be a number > 0, not '" + std::string(text) + "'");
  }
  *out = v;
  return Status::Ok();
}

}  // namespace

Status parse_peaks_option(std::string_view text, MachinePeaks* out) {
  std::optional<double> fma, triad, bf16;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return invalid_argument("--peaks: '" + std::string(item) +
                              "' is not NAME=VALUE (expected fma=GFLOPS,triad=GBS[,bf16=GFLOPS])");
    }
    const std::string_view name = item.substr(0, eq), value = item.substr(eq + 1);
    std::optional<double>* slot = name == "fma"     ? &fma
                                  : name == "triad" ? &triad
                                  : name == "bf16"  ? &bf16
                                                    : nullptr;
    if (slot == nullptr) return field_error(name, "is unknown (fma, triad, bf16)");
    if (Status s = parse_value(name, value, slot); !s.ok()) return s;
  }
  if (!fma) return field_error("fma", "is missing");
  if (!triad) return field_error("triad", "is missing");
  out->fma_gflops = *fma;
  out->triad_gbps = *triad;
  out->bf16_gflops = bf16;
  return Status::Ok();
}

}  // namespace tessera::cli
