// Embedding a few documents through the installed package:
//   embed_documents [MODEL_DIR]
// Splits each document into chunks (small windows, so the long one has
// several), prints each chunk's offsets, text and vector norm, and checks
// what a user relies on: a text that fits one window gets the same vector
// from embed() as its one chunk from embed_documents(). Exit 0 when it holds.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tessera/embedder.h"
#include "tessera/runtime.h"

namespace {

// The bytes of code points [begin, end) of UTF-8 `text`.
std::string code_point_span(const std::string& text, int64_t begin, int64_t end) {
  size_t b = text.size(), e = text.size();
  int64_t cp = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // continuation byte
    if (cp == begin) b = i;
    if (cp == end) {
      e = i;
      break;
    }
    ++cp;
  }
  return text.substr(b, e - b);
}

double norm(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += double(x) * x;
  return std::sqrt(s);
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<tessera::Runtime> runtime;
  tessera::Status s = tessera::Runtime::create({}, &runtime);
  tessera::EmbedderOptions options;
  if (argc > 1) options.model_dir = argv[1];
  options.max_tokens = 24;  // small windows: the second document has several chunks
  options.stride = 4;
  std::unique_ptr<tessera::Embedder> embedder;
  if (s.ok()) s = tessera::Embedder::load(*runtime, options, &embedder);
  if (!s.ok()) {
    std::fprintf(stderr, "embedder: %s\n", s.to_string().c_str());
    return 1;
  }
  const std::vector<std::string> documents = {
      "A short note about attention kernels.",
      "Long documents are split into overlapping windows. Each window becomes a chunk "
      "with its own vector. The offsets of a chunk name the span of text it covers, in "
      "Unicode code points, so a search hit can be shown in context. Ünïcödé counts once.",
      "",  // reported as a problem, not a failure of the call
  };
  std::vector<tessera::EmbeddedDocument> out;
  if (s = embedder->embed_documents(documents, /*doc_embedding=*/true, &out); !s.ok()) {
    std::fprintf(stderr, "embed_documents: %s\n", s.to_string().c_str());
    return 1;
  }
  std::printf("model %s: dim %d\n", embedder->model_dir().c_str(), embedder->dim());
  for (size_t d = 0; d < out.size(); ++d) {
    if (!out[d].problem.empty()) {
      std::printf("document %zu: skipped: %s\n", d, out[d].problem.c_str());
      continue;
    }
    std::printf("document %zu: %zu chunks, document vector norm %.4f\n", d, out[d].chunks.size(),
                norm(out[d].embedding));
    for (const tessera::EmbeddedChunk& c : out[d].chunks) {
      std::printf("  [%lld, %lld) norm %.4f  \"%s\"\n", static_cast<long long>(c.begin),
                  static_cast<long long>(c.end), norm(c.embedding),
                  code_point_span(documents[d], c.begin, c.end).c_str());
    }
  }
  std::vector<float> rows;
  if (s = embedder->embed({documents[0]}, /*truncate=*/false, &rows); !s.ok()) {
    std::fprintf(stderr, "embed: %s\n", s.to_string().c_str());
    return 1;
  }
  double worst = 0;
  for (int i = 0; i < embedder->dim(); ++i) {
    worst = std::max(worst, std::abs(double(rows[i]) - out[0].chunks.at(0).embedding[i]));
  }
  std::printf("embed() vs the document's one chunk: max |difference| = %.3g\n", worst);
  const bool ok = out[1].chunks.size() > 1 && out[2].chunks.empty() && worst <= 1e-6;
  return ok ? 0 : 1;
}
