// tessera.Embedder's compiled half: texts -> one row each, documents ->
// chunks with code-point offsets and vectors, each with a prompt and
// Matryoshka dimensions (EmbedOptions); tessera/_embedder.py adds
// sentence-transformers' encode() on top. Rows come back as numpy arrays
// that own the vectors the C++ API filled, without a copy.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime_handle.h"
#include "status_errors.h"
#include "tessera/embedder.h"
#include "tessera/embedding_rows.h"
#include "tessera/quantize.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tessera::python {
namespace {

struct EmbedderHandle {
  RuntimeHandle* runtime = nullptr;  // kept alive by nb::keep_alive
  std::unique_ptr<Embedder> embedder;
};

// A [rows, cols] numpy array that owns `values`.
template <typename T>
nb::ndarray<nb::numpy, T, nb::ndim<2>> owned_matrix(std::vector<T>&& values, size_t rows,
                                                    size_t cols) {
  auto* held = new std::vector<T>(std::move(values));
  nb::capsule owner(held, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T, nb::ndim<2>>(held->data(), {rows, cols}, owner);
}

void load(EmbedderHandle* self, RuntimeHandle& runtime, const std::string& model_dir,
          const std::string& weights, int max_tokens, int stride, int64_t batch_tokens) {
  EmbedderOptions o;
  o.model_dir = model_dir;
  o.weights = weights;
  o.max_tokens = max_tokens;
  o.stride = stride;
  o.batch_tokens = batch_tokens;
  std::unique_ptr<Embedder> e;
  run_unlocked(runtime, [&] { return Embedder::load(*runtime.runtime, o, &e); });
  new (self) EmbedderHandle{&runtime, std::move(e)};
}

// EmbedOptions from the Python keywords (tessera/_embedder.py resolves
// sentence-transformers' prompt rules and passes the prompt's text).
EmbedOptions embed_options(bool truncate, const std::optional<std::string>& prompt_name,
                           const std::optional<std::string>& prompt, int dimensions) {
  EmbedOptions o;
  o.truncate = truncate;
  o.prompt_name = prompt_name;
  o.prompt = prompt;
  o.dimensions = dimensions;
  return o;
}

size_t row_width(const EmbedderHandle& self, int dimensions) {
  return static_cast<size_t>(dimensions > 0 ? dimensions : self.embedder->dim());
}

nb::object embed(EmbedderHandle& self, const std::vector<std::string>& texts, bool truncate,
                 const std::optional<std::string>& prompt_name,
                 const std::optional<std::string>& prompt, int dimensions) {
  const EmbedOptions options = embed_options(truncate, prompt_name, prompt, dimensions);
  std::vector<float> rows;
  run_unlocked(*self.runtime, [&] { return self.embedder->embed(texts, options, &rows); });
  return nb::cast(owned_matrix(std::move(rows), texts.size(), row_width(self, dimensions)));
}

// One dict per document: offsets [n, 2] int64 (code points, [begin, end)),
// embeddings [n, dim] float32, embedding (the mean) or None, problem or None.
nb::list embed_documents(EmbedderHandle& self, const std::vector<std::string>& documents,
                         bool doc_embedding, const std::optional<std::string>& prompt_name,
                         const std::optional<std::string>& prompt, int dimensions) {
  const EmbedOptions options = embed_options(false, prompt_name, prompt, dimensions);
  std::vector<EmbeddedDocument> docs;
  run_unlocked(*self.runtime, [&] {
    return self.embedder->embed_documents(documents, doc_embedding, options, &docs);
  });
  const size_t dim = row_width(self, dimensions);
  nb::list out;
  for (EmbeddedDocument& d : docs) {
    const size_t n = d.chunks.size();
    std::vector<int64_t> offsets(2 * n);
    std::vector<float> vectors(n * dim);
    for (size_t i = 0; i < n; ++i) {
      offsets[2 * i] = d.chunks[i].begin;
      offsets[2 * i + 1] = d.chunks[i].end;
      std::memcpy(vectors.data() + i * dim, d.chunks[i].embedding.data(), dim * sizeof(float));
    }
    nb::object mean = nb::none();
    if (!d.embedding.empty()) mean = nb::cast(owned_matrix(std::move(d.embedding), 1, dim));
    nb::object problem = nb::none();
    if (!d.problem.empty()) problem = nb::str(d.problem.c_str());
    out.append(dict_of("offsets"_a = owned_matrix(std::move(offsets), n, 2),
                       "embeddings"_a = owned_matrix(std::move(vectors), n, dim),
                       "embedding"_a = mean, "problem"_a = problem));
  }
  return out;
}

// Cross-encoder raw logits: [inputs, labels] float32. Each input is a text
// (second None) or a pair.
nb::object score(EmbedderHandle& self,
                 const std::vector<std::pair<std::string, std::optional<std::string>>>& inputs,
                 bool truncate) {
  std::vector<ScoreInput> in;
  in.reserve(inputs.size());
  for (const auto& [text, pair] : inputs) in.push_back({text, pair});
  std::vector<float> scores;
  run_unlocked(*self.runtime, [&] { return self.embedder->score(in, truncate, &scores); });
  return nb::cast(owned_matrix(std::move(scores), inputs.size(), self.embedder->labels().size()));
}

// SPLADE: one (indices int32 [n], values float32 [n]) per text.
nb::list embed_sparse(EmbedderHandle& self, const std::vector<std::string>& texts, bool truncate) {
  std::vector<SparseVector> rows;
  run_unlocked(*self.runtime, [&] { return self.embedder->embed_sparse(texts, truncate, &rows); });
  nb::list out;
  for (SparseVector& r : rows) {
    const size_t n = r.indices.size();
    auto indices = owned_matrix(std::move(r.indices), 1, n);
    auto values = owned_matrix(std::move(r.values), 1, n);
    out.append(nb::make_tuple(indices, values));
  }
  return out;
}

// tessera.default_model_dir()'s compiled half: the library's rule for
// `model` ("" for the default); when nothing is named and nothing found,
// `fallback` if given (the Python package's own last resort), else the
// library's error with the Python user's `hint`.
std::string resolve_model(const std::string& model, const std::string& fallback,
                          const std::string& hint) {
  std::string dir;
  Status st = resolve_model_dir(model, &dir);
  if (st.code() == StatusCode::kUnavailable) {
    if (!fallback.empty()) return fallback;
    if (!hint.empty()) st = Status(st.code(), st.message() + "; " + hint);
  }
  throw_if_error(st);
  return dir;
}

// tessera.ray's rows as `tessera embed` writes them (one formatter,
// include/tessera/embedding_rows.h): row i is ids_json[i] (the id as JSON
// text), counts[i] (its chunk index, or its chunks when document_rows),
// [begins[i], ends[i]) and row i of `values`, the rows' bytes: dims float32
// values each, or quantized_row_bytes(precision, dims) bytes.
std::vector<std::string> format_jsonl_rows(const std::vector<std::string>& ids_json,
                                           const std::vector<int64_t>& counts, bool document_rows,
                                           const std::vector<int64_t>& begins,
                                           const std::vector<int64_t>& ends,
                                           const nb::bytes& values, const std::string& precision,
                                           int dims) {
  Precision p{};
  throw_if_error(parse_precision(precision, "precision", &p));
  const size_t n = ids_json.size();
  if (counts.size() != n || begins.size() != n || ends.size() != n) {
    throw nb::value_error(("ids_json, counts, begins and ends: " + std::to_string(n) + ", " +
                           std::to_string(counts.size()) + ", " + std::to_string(begins.size()) +
                           " and " + std::to_string(ends.size()) + " rows; they must be equal")
                              .c_str());
  }
  if (dims < 1) throw nb::value_error(("dims = " + std::to_string(dims) + " must be >= 1").c_str());
  const auto width = static_cast<size_t>(p == Precision::kFloat32 ? int64_t{4} * dims
                                                                  : quantized_row_bytes(p, dims));
  if (values.size() != n * width) {
    throw nb::value_error(("values: " + std::to_string(values.size()) + " bytes, expected " +
                           std::to_string(n) + " rows x " + std::to_string(width) + " (" +
                           precision + ", " + std::to_string(dims) + " dimensions)")
                              .c_str());
  }
  const auto* bytes = static_cast<const char*>(values.c_str());
  std::vector<std::string> lines(n);
  for (size_t i = 0; i < n; ++i) {
    EmbeddingRowFields row;
    row.id_json = ids_json[i];
    (document_rows ? row.chunks : row.chunk) = counts[i];
    row.begin = begins[i];
    row.end = ends[i];
    throw_if_error(format_embedding_row(row, p, bytes + i * width, dims, &lines[i]));
  }
  return lines;
}

}  // namespace

void bind_embedder(nb::module_& m) {
  m.def("resolve_model_dir", &resolve_model, "model"_a, "fallback"_a = "", "hint"_a = "");
  m.def("model_data_dir", [] { return model_data_dir(); });
  m.def("format_jsonl_rows", &format_jsonl_rows, "ids_json"_a, "counts"_a, "document_rows"_a,
        "begins"_a, "ends"_a, "values"_a, "precision"_a, "dims"_a);
  nb::class_<EmbedderHandle>(m, "Embedder")
      .def("__init__", &load, "runtime"_a, "model_dir"_a = "", "weights"_a = "", "max_tokens"_a = 0,
           "stride"_a = -1, "batch_tokens"_a = 0, nb::keep_alive<1, 2>())
      .def_prop_ro("dim", [](EmbedderHandle& e) { return e.embedder->dim(); })
      .def_prop_ro("max_tokens", [](EmbedderHandle& e) { return e.embedder->max_tokens(); })
      .def_prop_ro("normalized", [](EmbedderHandle& e) { return e.embedder->normalized(); })
      .def_prop_ro("model_dir", [](EmbedderHandle& e) { return e.embedder->model_dir(); })
      .def_prop_ro("kind", [](EmbedderHandle& e) { return model_kind_name(e.embedder->kind()); })
      .def_prop_ro("labels", [](EmbedderHandle& e) { return e.embedder->labels(); })
      // config_sentence_transformers.json's prompts and default_prompt_name
      // ("" when none), as the model directory has them.
      .def_prop_ro("prompts", [](EmbedderHandle& e) { return e.embedder->prompts(); })
      .def_prop_ro("default_prompt_name",
                   [](EmbedderHandle& e) { return e.embedder->default_prompt_name(); })
      .def("score", &score, "inputs"_a, "truncate"_a = true)
      .def("embed_sparse", &embed_sparse, "texts"_a, "truncate"_a = true)
      .def("embed", &embed, "texts"_a, "truncate"_a = false, "prompt_name"_a = nb::none(),
           "prompt"_a = nb::none(), "dimensions"_a = 0)
      .def("embed_documents", &embed_documents, "documents"_a, "doc_embedding"_a = false,
           "prompt_name"_a = nb::none(), "prompt"_a = nb::none(), "dimensions"_a = 0);
}

}  // namespace tessera::python
