// HF `tokenizers` decoders: tokens back to text. A decoder is a chain of
// steps, each mapping the list of token strings to a new list (HF's
// decode_chain); the results are then concatenated. Without a decoder HF joins
// the tokens with single spaces. Steps: WordPiece, ByteLevel, Metaspace,
// Replace (string pattern), Strip, Fuse, ByteFallback, and Sequence of them.
// A decoder type tessera does not know is kept by name: loading still works
// (an embedding model never decodes) and decode() says why it cannot.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/tokenizers/json_fields.h"
#include "tessera/status.h"

namespace tessera::model::tokenizers {

struct DecoderStep {
  enum Kind : uint8_t {
    kWordPiece,
    kByteLevel,
    kMetaspace,
    kReplace,
    kStrip,
    kFuse,
    kByteFallback
  };
  Kind kind;
  std::string a;      // WordPiece prefix, Metaspace replacement, Replace pattern, Strip content
  std::string b;      // Replace content
  bool flag = false;  // WordPiece cleanup; Metaspace: prepend_scheme != never
  size_t start = 0;   // Strip
  size_t stop = 0;
};

class Decoder {
 public:
  // No decoder: tokens joined by spaces.
  Decoder() = default;
  static Decoder wordpiece(std::string prefix, bool cleanup);

  // Reads root["decoder"] (absent or null: no decoder).
  static Status read(const JsonFields& f, const nlohmann::json& root, Decoder* out);

  Status decode(std::vector<std::string> tokens, std::string* out) const;
  std::string describe() const;

 private:
  bool none_ = true;
  std::string unsupported_;  // a type tessera cannot decode with
  std::vector<DecoderStep> steps_;
};

// HF's WordPiece `cleanup` of one decoded piece (exposed for tests).
void wordpiece_cleanup(std::string* piece);

// Rust String::from_utf8_lossy: each maximal invalid subsequence becomes U+FFFD.
std::string utf8_lossy(std::string_view bytes);

}  // namespace tessera::model::tokenizers
