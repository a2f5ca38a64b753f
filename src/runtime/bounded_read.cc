#include "runtime/bounded_read.h"

#include <algorithm>

namespace tessera {

namespace {

// Bytes asked of the stream at a time: bounds what a read past the cap costs.
constexpr uint64_t kReadPieceBytes = uint64_t{1} << 20;
// A line is scanned in pieces of this many bytes (istream::getline's buffer).
constexpr std::streamsize kLinePieceBytes = std::streamsize{16} << 10;

}  // namespace

void read_all_bounded(std::istream& in, uint64_t max_bytes, std::string* out, bool* truncated) {
  out->clear();
  *truncated = false;
  for (;;) {
    // One byte past the cap tells "exactly max_bytes" from "more".
    const uint64_t piece = std::min(max_bytes + 1 - out->size(), kReadPieceBytes);
    const size_t old_size = out->size();
    out->resize(old_size + piece);
    in.read(out->data() + old_size, static_cast<std::streamsize>(piece));
    const auto got = static_cast<size_t>(in.gcount());
    out->resize(old_size + got);
    if (out->size() > max_bytes) {
      out->resize(max_bytes);
      *truncated = true;
      return;
    }
    if (got < piece) return;  // the end, or a read error the caller sees in `in`
  }
}

LineRead read_line_bounded(std::istream& in, uint64_t max_bytes, std::string* line,
                           uint64_t* consumed) {
  line->clear();
  *consumed = 0;
  bool too_long = false;
  bool any = false;  // bytes of this line seen (an empty line still counts)
  for (;;) {
    char piece[kLinePieceBytes];
    in.getline(piece, kLinePieceBytes);
    const auto got = static_cast<uint64_t>(in.gcount());
    *consumed += got;
    // getline stops at '\n' (extracted, counted in gcount, not stored), at
    // the end of the stream, or with failbit and a full buffer mid-line.
    const bool newline = !in.fail() && !in.eof();
    const bool full = in.fail() && !in.eof() && got == kLinePieceBytes - 1;
    const uint64_t chars = newline ? got - 1 : got;
    any = any || got > 0;
    if (!too_long && line->size() + chars > max_bytes) {
      too_long = true;
      line->clear();
    }
    if (!too_long) line->append(piece, chars);
    if (full) {
      in.clear(in.rdstate() & ~std::ios::failbit);
      continue;
    }
    if (!any) return LineRead::kEnd;
    return too_long ? LineRead::kTooLong : LineRead::kLine;
  }
}

}  // namespace tessera
