// Token ids back to text as HF `tokenizers` decodes: ids -> tokens (added
// tokens override the vocabulary), special tokens dropped when asked, then
// the decoder chain. Unlike HF, which drops an id it does not know, decode()
// refuses it and says where it is: a server must not answer a different text
// than asked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/tokenizers/decoder.h"
#include "tessera/status.h"

namespace tessera::model::tokenizers {

class IdDecoder {
 public:
  IdDecoder() = default;
  explicit IdDecoder(Decoder decoder) : decoder_(std::move(decoder)) {}

  // Gives `id` its text; a later call for the same id wins (added tokens are
  // set after the vocabulary, as HF looks them up first).
  void set_token(int32_t id, std::string text, bool special);

  // Decodes `ids`. An id without a token fails with InvalidArgument and
  // *bad_position = its index in `ids`; out is then unspecified.
  Status decode(const std::vector<int64_t>& ids, bool skip_special_tokens, std::string* out,
                size_t* bad_position) const;

  // The text of `id`, or nullptr.
  const std::string* token(int32_t id) const {
    const auto i = static_cast<size_t>(id);
    return id >= 0 && i < tokens_.size() && kinds_[i] != kNone ? &tokens_[i] : nullptr;
  }
  // Ids with a token are in [0, id_limit()).
  int64_t id_limit() const { return static_cast<int64_t>(tokens_.size()); }
  const Decoder& decoder() const { return decoder_; }

 private:
  enum Kind : uint8_t { kNone, kToken, kSpecial };
  Decoder decoder_;
  std::vector<std::string> tokens_;  // by id
  std::vector<Kind> kinds_;          // by id
};

}  // namespace tessera::model::tokenizers
