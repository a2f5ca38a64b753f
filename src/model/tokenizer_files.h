// Reading a tokenizer description from a model directory: HF tokenizer.json
// (WordPiece + BertNormalizer + BertPreTokenizer) or, as a fallback, a BERT
// vocab.txt with BERT's defaults. Every error names the file and the field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/bert_normalizer.h"
#include "model/tokenizer_added_tokens.h"
#include "model/wordpiece.h"
#include "model/wordpiece_decoder.h"
#include "tessera/status.h"

namespace tessera::model {

struct TokenizerSpec {
  std::vector<std::pair<std::string, int32_t>> vocab;  // token -> id, file order
  WordPieceOptions wordpiece;
  BertNormalizerOptions normalizer;
  std::vector<AddedToken> added_tokens;
  // [CLS] and [SEP] of the single-sequence template, by id when the file gives
  // ids (tokenizer.json), else by token.
  std::optional<int32_t> cls_id, sep_id;
  std::string cls_token = "[CLS]", sep_token = "[SEP]";
  std::optional<int32_t> pad_id;
  std::string pad_token = "[PAD]";
  WordPieceDecoderOptions decoder;
};

// tokenizer.json as written by HF `tokenizers` (format version 1.0).
// Truncation and padding (except its pad id) are ignored.
Status read_tokenizer_json(const std::string& path, TokenizerSpec* out);

// vocab.txt (one token per line, id = line number) with the defaults of HF's
// BertWordPieceTokenizer: lowercase, strip accents, clean text, CJK spacing,
// [CLS] A [SEP], [UNK] [SEP] [CLS] [PAD] [MASK] as special added tokens when
// present, and the WordPiece decoder.
Status read_vocab_txt(const std::string& path, TokenizerSpec* out);

}  // namespace tessera::model
