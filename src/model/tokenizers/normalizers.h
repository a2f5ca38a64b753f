// HF `tokenizers` normalizers for the generic pipeline (pipeline.h): NFC,
// NFD, NFKC, NFKD (ICU), Lowercase, Strip, Replace (string or regex
// pattern), Prepend, Precompiled (sentencepiece's charsmap) and Sequence.
// Each step rewrites a NormalizedText keeping HF's alignments, so offsets
// stay exact. (WordPiece's BertNormalizer is fused into its own single pass:
// wordpiece/bert_normalizer.h.)
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/tokenizers/json_fields.h"
#include "model/tokenizers/normalized_text.h"
#include "model/tokenizers/precompiled_charsmap.h"
#include "tessera/status.h"

namespace tessera::model::tokenizers {

class Normalizer {
 public:
  struct Step;

  Normalizer();
  ~Normalizer();
  Normalizer(Normalizer&&) noexcept;
  Normalizer& operator=(Normalizer&&) noexcept;

  // Reads root["normalizer"] (absent or null: the text as is).
  static Status read(const JsonFields& f, const nlohmann::json& root, Normalizer* out);

  // Runs every step; a step's error (a regex that backtracks without end),
  // or a text grown past a multiple of its input, stops it.
  Status normalize(NormalizedText* text) const;
  bool empty() const { return steps_.empty(); }
  std::string describe() const;

 private:
  std::vector<std::unique_ptr<const Step>> steps_;  // normalizer_step.h
};

}  // namespace tessera::model::tokenizers
