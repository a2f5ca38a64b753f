// Embedder: a sentence-transformers / HF encoder model loaded from a
// directory. An embedding model embeds texts (one vector each, as TEI's
// /embed) or documents (split into overlapping token windows, one vector per
// chunk with its offsets, as `tessera embed`); a cross-encoder scores texts
// or pairs (TEI's /rerank, /predict); a SPLADE model gives sparse vectors
// (/embed_sparse). kind() says which; a call of another kind fails naming
// it. Attention runs through the Runtime's dispatcher and every buffer
// comes from its context's tracked allocator.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/model_kind.h"
#include "tessera/runtime.h"
#include "tessera/status.h"

namespace tessera {

// Where a model is found: one rule for the CLI, the server, this API and
// Python (docs/API.md, "Models"). `model` is a model directory, else the
// name of a model registered in the data directory (`tessera models add
// DIR`); "" is the default: $TESSERA_MODEL (read the same way), else the data
// directory's default model, else, for a program run from tessera's own
// build tree only, that checkout's models/all-MiniLM-L6-v2. kNotFound: a
// model named (or $TESSERA_MODEL's) is not there; kUnavailable: none named,
// none found (the message says where it looked and how to register one).
Status resolve_model_dir(const std::string& model, std::string* dir);

// The data directory the registered models live in (models/NAME):
// $TESSERA_DATA_DIR, else $XDG_DATA_HOME/tessera, else
// ~/.local/share/tessera; "" when none of them is set.
std::string model_data_dir();

// The options of `tessera embed` (its --help says more).
struct EmbedderOptions {
  // A model directory or a registered model's name; "": the default
  // (resolve_model_dir: $TESSERA_MODEL, else the data directory's default).
  std::string model_dir;
  std::string weights;  // "f32", "bf16" or "int8"; "": $TESSERA_WEIGHTS, else f32
  // Per chunk, the model's special tokens included ([CLS] and [SEP]; one
  // <|endoftext|>); 0: the model's limit, so a document that fits is one chunk.
  int max_tokens = 0;
  int stride = -1;           // tokens shared by neighbouring chunks; < 0: the default (32)
  int64_t batch_tokens = 0;  // encoder tokens per batch; 0: 8192, or max_tokens when larger
};

// Per-call options of embed() and embed_documents(), as
// sentence-transformers' encode(prompt_name=, prompt=, truncate_dim=).
struct EmbedOptions {
  bool truncate = false;       // embed(): cut a text longer than max_tokens() instead of failing
  bool truncate_left = false;  // cut from the text's start (TEI's truncation_direction "Left")
  // Prepended to every text before tokenizing, so its tokens count toward
  // max_tokens(): `prompt` itself, else prompts()[prompt_name] (an unknown
  // name fails naming the known ones), else default_prompt_name()'s.
  std::optional<std::string> prompt_name;
  std::optional<std::string> prompt;
  // Matryoshka: keep each vector's first `dimensions` values, re-normalised
  // when normalized(); 0: all dim(). Must be in [1, dim()].
  int dimensions = 0;
};

// One chunk of a document: [begin, end) in Unicode code points into the
// document's text, and its vector (dim() floats).
struct EmbeddedChunk {
  int64_t begin = 0;
  int64_t end = 0;
  std::vector<float> embedding;
};

struct EmbeddedDocument {
  std::vector<EmbeddedChunk> chunks;  // in text order; empty if `problem` is set
  std::vector<float> embedding;       // mean of the chunks (re-normalized); when asked
  std::string problem;                // why this document was skipped ("empty document")
};

// One input of score(): a text, or a (text, pair) such as (query, document).
struct ScoreInput {
  std::string text;
  std::optional<std::string> pair;
};

// A sparse vector: the nonzero entries, by increasing index (a token id).
struct SparseVector {
  std::vector<int32_t> indices;
  std::vector<float> values;
};

class Embedder {
 public:
  // `runtime` must outlive the Embedder. Embedding calls must not overlap.
  static Status load(Runtime& runtime, const EmbedderOptions& options,
                     std::unique_ptr<Embedder>* out);
  ~Embedder();
  Embedder(const Embedder&) = delete;
  Embedder& operator=(const Embedder&) = delete;

  int dim() const;
  int max_tokens() const;   // the model's limit, its special tokens included
  bool normalized() const;  // rows are L2-normalized by the model
  const std::string& model_dir() const;
  ModelKind kind() const;
  // A reranker's or classifier's output names (config.json id2label), in
  // order; empty for other kinds.
  const std::vector<std::string>& labels() const;
  // config_sentence_transformers.json's prompts (name -> text) and its
  // default_prompt_name ("" when none).
  const std::map<std::string, std::string>& prompts() const;
  const std::string& default_prompt_name() const;

  // One row per text into *out (texts.size() x dim() floats). A text longer
  // than max_tokens() is cut when `truncate`, else the call fails naming it.
  Status embed(const std::vector<std::string>& texts, bool truncate, std::vector<float>* out);
  // The same with prompts, truncation side and dimensions: texts.size() x
  // (options.dimensions or dim()) floats.
  Status embed(const std::vector<std::string>& texts, const EmbedOptions& options,
               std::vector<float>* out);

  // Each document (valid UTF-8) into chunks with offsets and vectors; with
  // `doc_embedding` also the mean vector. A document that cannot be embedded
  // (empty) gets its `problem`; the model failing fails the call.
  Status embed_documents(const std::vector<std::string>& documents, bool doc_embedding,
                         std::vector<EmbeddedDocument>* out);
  // The same with a prompt before every chunk (its tokens count toward the
  // window) and shortened vectors; options.truncate* do not apply (documents
  // are windowed, never cut).
  Status embed_documents(const std::vector<std::string>& documents, bool doc_embedding,
                         const EmbedOptions& options, std::vector<EmbeddedDocument>* out);

  // Reranker / classifier: raw logits, inputs.size() x labels().size()
  // floats, row i for inputs[i] (no activation: callers apply sigmoid or
  // softmax as their protocol says). An input longer than max_tokens() is cut
  // (a pair longest-first, as HF) when `truncate`, else the call fails naming it.
  Status score(const std::vector<ScoreInput>& inputs, bool truncate, std::vector<float>* out);
  // The same for the pairs (query, texts[i]).
  Status score(const std::string& query, const std::vector<std::string>& texts, bool truncate,
               std::vector<float>* out);

  // SPLADE: one sparse vector per text (indices < the vocabulary size).
  Status embed_sparse(const std::vector<std::string>& texts, bool truncate,
                      std::vector<SparseVector>* out);

 private:
  struct Impl;
  explicit Embedder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera
