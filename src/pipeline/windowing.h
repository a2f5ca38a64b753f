// Splitting a document's tokens into overlapping windows that fit the model.
// A window holds at most max_tokens - 2 document tokens ([CLS] and [SEP] take
// the other two); consecutive windows share exactly `stride` tokens (the
// Hugging Face meaning of stride), and the last one ends at the last token, so
// every token lies in some window. A document that fits is one window.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/status.h"

namespace tessera::pipeline {

struct WindowOptions {
  int max_tokens = 256;  // per chunk, [CLS] and [SEP] included
  int stride = 32;       // tokens shared by consecutive windows
};

// [begin, end): indices into the document's token list.
struct Window {
  int64_t begin = 0;
  int64_t end = 0;
};

// Checks max_tokens >= 3 and 0 <= stride < max_tokens - 2; the message names
// the flag (--max-tokens / --stride) and the values.
Status check_window_options(const WindowOptions& options);

// Windows over `num_tokens` tokens (none for 0). Options must be valid.
std::vector<Window> plan_windows(int64_t num_tokens, const WindowOptions& options);

}  // namespace tessera::pipeline
