// Reading text from a stream (stdin, or a file through FdStreambuf) without
// letting one record hold more than a cap. `tessera embed` reads a document
// whole and a JSONL record by line; /dev/zero on stdin or a 10 GB line must
// cost at most the cap, not the machine's memory.
#pragma once

#include <cstdint>
#include <istream>
#include <string>

namespace tessera {

// Reads `in` to its end or to max_bytes, whichever comes first, into *out.
// *truncated says there was more (it is left unread).
void read_all_bounded(std::istream& in, uint64_t max_bytes, std::string* out, bool* truncated);

enum class LineRead { kLine, kTooLong, kEnd };

// The next line of `in`, without its '\n', into *line (kLine); kEnd when the
// stream has no more. A line longer than max_bytes is read to its end in
// pieces and dropped (kTooLong, *line empty), so the next call starts on the
// next line. *consumed gets the bytes taken from `in`, the '\n' included.
LineRead read_line_bounded(std::istream& in, uint64_t max_bytes, std::string* line,
                           uint64_t* consumed);

}  // namespace tessera
