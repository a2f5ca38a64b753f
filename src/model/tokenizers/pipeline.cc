#include "model/tokenizers/pipeline.h"

#include <algorithm>

namespace tessera::model::tokenizers {

Status PipelineTokenizer::create(const LoadContext& ctx, std::unique_ptr<const WordModel> model,
                                 std::unique_ptr<TokenizerModel>* out) {
  Normalizer normalizer;
  TESSERA_RETURN_IF_ERROR(Normalizer::read(ctx.fields, ctx.root, &normalizer));
  PreTokenizer pre;
  TESSERA_RETURN_IF_ERROR(PreTokenizer::read(ctx.fields, ctx.root, &pre));
  *out =
      std::make_unique<PipelineTokenizer>(std::move(normalizer), std::move(pre), std::move(model));
  return Status::Ok();
}

Status PipelineTokenizer::tokenize(std::string_view text, size_t begin, size_t end,
                                   std::vector<TokenSpan>* out, WorkLimit* limit) const {
  NormalizedText span = NormalizedText::original(text, begin, end);
  TESSERA_RETURN_IF_ERROR(normalizer_.normalize(&span));
  if (normalized_added_.empty()) return tokenize_piece(std::move(span), out, limit);
  // As HF: normalized added tokens split the normalized span; each piece is
  // pre-tokenized on its own.
  size_t piece = 0, scan = 0;
  AddedTokenMatcher::Match m;
  while (normalized_added_.next(span.text, &scan, piece, &m)) {
    if (m.begin > piece) {
      TESSERA_RETURN_IF_ERROR(tokenize_piece(span.slice(piece, m.begin), out, limit));
    }
    out->push_back({m.id, span.align[m.begin].begin, span.align[m.end - 1].end});
    piece = std::max(piece, m.end);
  }
  if (piece == span.text.size()) return Status::Ok();
  return tokenize_piece(span.slice(piece, span.text.size()), out, limit);
}

Status PipelineTokenizer::tokenize_piece(NormalizedText piece, std::vector<TokenSpan>* out,
                                         WorkLimit* limit) const {
  std::vector<NormalizedText> words;
  TESSERA_RETURN_IF_ERROR(pre_tokenizer_.split(std::move(piece), &words));
  std::vector<WordModel::Piece> pieces;
  for (const NormalizedText& word : words) {
    // Asked before each word: a word's cost grows with its length
    // (O(n log n) for BPE), so the bound holds to within one word.
    TESSERA_RETURN_IF_ERROR(advance(limit, word.text.size()));
    pieces.clear();
    model_->tokenize(word.text, &pieces);
    for (size_t k = 0; k < pieces.size(); ++k) {
      const WordModel::Piece& p = pieces[k];
      if (p.end <= p.begin || p.end > word.align.size()) continue;
      out->push_back({p.id, word.align[p.begin].begin, word.align[p.end - 1].end,
                      /*continues_word=*/k != 0});
    }
  }
  return Status::Ok();
}

Status PipelineTokenizer::set_normalized_added_tokens(std::vector<AddedToken> tokens) {
  for (AddedToken& t : tokens) {
    NormalizedText content = NormalizedText::original(t.content, 0, t.content.size());
    TESSERA_RETURN_IF_ERROR(normalizer_.normalize(&content));
    t.content = std::move(content.text);
  }
  normalized_added_ = AddedTokenMatcher(std::move(tokens));
  return Status::Ok();
}

std::string PipelineTokenizer::describe() const {
  return "model: " + model_->describe() + "\nnormalizer: " + normalizer_.describe() +
         "\npre_tokenizer: " + pre_tokenizer_.describe() + "\n";
}

}  // namespace tessera::model::tokenizers
