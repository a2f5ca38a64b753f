#include "model/tokenizers/pipeline.h"

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

void PipelineTokenizer::tokenize(std::string_view text, size_t begin, size_t end,
                                 std::vector<TokenSpan>* out) const {
  NormalizedText span = NormalizedText::original(text, begin, end);
  normalizer_.normalize(&span);
  std::vector<NormalizedText> words;
  pre_tokenizer_.split(std::move(span), &words);
  std::vector<WordModel::Piece> pieces;
  for (const NormalizedText& word : words) {
    pieces.clear();
    model_->tokenize(word.text, &pieces);
    for (size_t k = 0; k < pieces.size(); ++k) {
      const WordModel::Piece& p = pieces[k];
      if (p.end <= p.begin || p.end > word.align.size()) continue;
      out->push_back({p.id, word.align[p.begin].begin, word.align[p.end - 1].end,
                      /*continues_word=*/k != 0});
    }
  }
}

std::string PipelineTokenizer::describe() const {
  return "model: " + model_->describe() + "\nnormalizer: " + normalizer_.describe() +
         "\npre_tokenizer: " + pre_tokenizer_.describe() + "\n";
}

}  // namespace tessera::model::tokenizers
