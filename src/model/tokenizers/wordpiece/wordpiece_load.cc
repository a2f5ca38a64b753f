// Reading a WordPiece tokenizer.json (model, normalizer, pre-tokenizer), and
// turning a bare vocab.txt into the tokenizer.json HF's BertWordPieceTokenizer
// would write for it.
#include <nlohmann/json.hpp>

#include "model/tokenizer_unicode.h"
#include "model/tokenizer_utf8.h"
#include "model/tokenizers/wordpiece/wordpiece_tokenizer.h"
#include "model/tokenizers/wordpiece/wordpiece_type.h"
#include "runtime/json_input.h"
#include "runtime/regular_file.h"

namespace tessera::model::tokenizers {
namespace {

using nlohmann::json;

constexpr const char* kBertSpecialTokens[] = {"[UNK]", "[SEP]", "[CLS]", "[PAD]", "[MASK]"};

Status read_wordpiece_model(const JsonFields& f, const json& model, WordPieceOptions* options,
                            std::vector<std::pair<std::string, int32_t>>* vocab) {
  const auto v = model.find("vocab");
  if (v == model.end() || !v->is_object()) {
    return f.error("model.vocab", "must be an object mapping tokens to ids");
  }
  vocab->reserve(v->size());
  for (const auto& [token, id] : v->items()) {
    int32_t value = 0;
    TESSERA_RETURN_IF_ERROR(
        f.get_id(id, "model.vocab[\"" + json_input::clip(token) + "\"]", &value));
    vocab->emplace_back(token, value);
  }
  TESSERA_RETURN_IF_ERROR(f.get_string(model, "model.", "unk_token", &options->unk_token));
  TESSERA_RETURN_IF_ERROR(f.get_string(model, "model.", "continuing_subword_prefix",
                                       &options->continuing_subword_prefix));
  if (const auto it = model.find("max_input_chars_per_word"); it != model.end()) {
    if (!it->is_number_unsigned()) {
      return f.error("model.max_input_chars_per_word",
                     "must be a non-negative integer, not " + json_input::render(*it));
    }
    options->max_input_chars_per_word = it->get<size_t>();
  }
  return Status::Ok();
}

// The fused single pass knows BertNormalizer (or none) and BertPreTokenizer.
Status read_bert_normalizer(const JsonFields& f, const json& root, BertNormalizerOptions* out) {
  const auto it = root.find("normalizer");
  if (it == root.end() || it->is_null()) {
    *out = {false, false, false, false};  // no normalizer: text as is
    return Status::Ok();
  }
  const json& n = *it;
  if (JsonFields::type_of(n) != "BertNormalizer") {
    return f.unsupported_value("normalizer", n.is_object() ? n.value("type", json()) : n,
                               "\"BertNormalizer\" or null with a WordPiece model");
  }
  *out = {};
  TESSERA_RETURN_IF_ERROR(f.get_bool(n, "normalizer.", "clean_text", &out->clean_text));
  TESSERA_RETURN_IF_ERROR(
      f.get_bool(n, "normalizer.", "handle_chinese_chars", &out->handle_chinese_chars));
  TESSERA_RETURN_IF_ERROR(f.get_bool(n, "normalizer.", "lowercase", &out->lowercase));
  // strip_accents: null means "same as lowercase" (BERT's rule).
  out->strip_accents = out->lowercase;
  const auto strip = n.find("strip_accents");
  if (strip != n.end() && !strip->is_null()) {
    TESSERA_RETURN_IF_ERROR(f.get_bool(n, "normalizer.", "strip_accents", &out->strip_accents));
  }
  return Status::Ok();
}

Status load_wordpiece(const LoadContext& ctx, std::unique_ptr<TokenizerModel>* out) {
  const JsonFields& f = ctx.fields;
  WordPieceOptions options;
  std::vector<std::pair<std::string, int32_t>> vocab;
  TESSERA_RETURN_IF_ERROR(read_wordpiece_model(f, ctx.root["model"], &options, &vocab));
  BertNormalizerOptions normalizer;
  TESSERA_RETURN_IF_ERROR(read_bert_normalizer(f, ctx.root, &normalizer));
  const auto pre = ctx.root.find("pre_tokenizer");
  const json value = pre == ctx.root.end() ? json() : *pre;
  if (JsonFields::type_of(value) != "BertPreTokenizer") {
    return f.unsupported_value("pre_tokenizer",
                               value.is_object() ? value.value("type", json()) : value,
                               "\"BertPreTokenizer\" with a WordPiece model");
  }
  WordPiece wp;
  TESSERA_RETURN_IF_ERROR(WordPiece::create(vocab, options, f.path(), &wp));
  *out = std::make_unique<WordPieceTokenizer>(std::move(wp), normalizer, std::move(vocab));
  return Status::Ok();
}

// Rust str::trim_end: drops trailing White_Space characters.
std::string_view trim_end(std::string_view line) {
  while (!line.empty()) {
    size_t start = line.size() - 1;
    while (start > 0 && (static_cast<unsigned char>(line[start]) & 0xC0) == 0x80) --start;
    int len = 0;
    if (!unicode::is_whitespace(decode_utf8(line.data() + start, &len))) break;
    line.remove_suffix(line.size() - start);
  }
  return line;
}

// vocab.txt (one token per line, id = line number) with the defaults of HF's
// BertWordPieceTokenizer: lowercase, strip accents, clean text, CJK spacing,
// [CLS] A [SEP], [UNK] [SEP] [CLS] [PAD] [MASK] as special added tokens when
// present, and the WordPiece decoder.
Status convert_vocab_txt(const std::string& path, json* root) {
  std::string text;
  TESSERA_RETURN_IF_ERROR(read_regular_file(path, json_input::kMaxFileBytes, &text));
  if (const size_t bad = find_invalid_utf8(text); bad != text.size()) {
    size_t line = 1;
    for (size_t i = 0; i < bad; ++i) line += text[i] == '\n';
    return invalid_argument(path + ": invalid UTF-8 at byte offset " + std::to_string(bad) +
                            " (line " + std::to_string(line) + ")");
  }
  json vocab = json::object();
  std::string_view rest = text;
  int32_t id = 0;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    vocab[std::string(trim_end(rest.substr(0, nl)))] = id++;  // a later duplicate wins
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
  }
  if (id == 0) return invalid_argument(path + ": the vocabulary is empty");
  json added = json::array();
  for (const char* special : kBertSpecialTokens) {
    if (vocab.contains(special)) {
      added.push_back({{"id", vocab[special]}, {"content", special}, {"special", true}});
    }
  }
  for (const char* needed : {"[CLS]", "[SEP]"}) {
    if (!vocab.contains(needed)) {
      return invalid_argument(path + ": the token \"" + std::string(needed) +
                              "\" that BERT's [CLS] A [SEP] needs is not in the vocabulary");
    }
  }
  *root = {
      {"model", {{"type", "WordPiece"}, {"vocab", vocab}}},
      {"normalizer", {{"type", "BertNormalizer"}}},
      {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
      {"post_processor",
       {{"type", "BertProcessing"},
        {"cls", {"[CLS]", vocab["[CLS]"]}},
        {"sep", {"[SEP]", vocab["[SEP]"]}}}},
      {"decoder", {{"type", "WordPiece"}}},
      {"added_tokens", added},
  };
  return Status::Ok();
}

}  // namespace

const TokenizerType& wordpiece_tokenizer_type() {
  static const TokenizerType type{"WordPiece", &load_wordpiece, "vocab.txt", &convert_vocab_txt};
  return type;
}

}  // namespace tessera::model::tokenizers
