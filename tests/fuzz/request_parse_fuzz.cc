// Fuzz target: the JSON bodies of the server's routes. The first byte picks
// the route (/embed, /v1/embeddings, /tokenize, /embed_all, /similarity,
// /decode) and the default of
// `truncate`; the rest is the body. An accepted request must respect the
// batch limit; a refused one must carry an HTTP error status.
#include <cstdint>
#include <cstdlib>

#include "scratch_dir.h"
#include "server/request_parse.h"

namespace {

void check(const tessera::server::ApiError& e, size_t inputs,
           const tessera::server::ParseLimits& limits) {
  if (e.ok()) {
    if (inputs == 0 || inputs > limits.max_client_batch_size) std::abort();
  } else if (e.status < 400 || e.status > 599) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::server;
  if (size == 0) return 0;
  ParseLimits limits;
  limits.auto_truncate = (data[0] & 0x10) != 0;
  const std::string_view body = tessera::fuzz::as_text(data + 1, size - 1);
  switch (data[0] % 6) {
    case 0: {
      EmbedRequest r;
      const ApiError e = parse_embed_request(body, limits, &r);  // before r.inputs is read
      check(e, r.inputs.size(), limits);
      break;
    }
    case 1: {
      OpenAIRequest r;
      const ApiError e = parse_openai_request(body, limits, &r);  // before r.inputs is read
      check(e, r.inputs.size(), limits);
      break;
    }
    case 2: {
      TokenizeRequest r;
      const ApiError e = parse_tokenize_request(body, limits, &r);  // before r.inputs is read
      check(e, r.inputs.size(), limits);
      break;
    }
    case 3: {
      EmbedAllRequest r;
      const ApiError e = parse_embed_all_request(body, limits, &r);
      check(e, r.inputs.size(), limits);
      break;
    }
    case 4: {
      SimilarityRequest r;
      const ApiError e = parse_similarity_request(body, limits, &r);
      // The source is one of the texts; accepted means at least one sentence.
      check(e, r.sentences.empty() ? 0 : r.sentences.size() + 1, limits);
      break;
    }
    default: {
      DecodeRequest r;
      const ApiError e = parse_decode_request(body, limits, &r);
      check(e, r.ids.size(), limits);
      break;
    }
  }
  return 0;
}
