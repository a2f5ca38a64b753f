// Fuzz target: the JSON bodies of the server's routes. The first byte picks
// the route (/embed, /v1/embeddings, /tokenize, /embed_all, /similarity,
// /decode, /v2/embed, /embed_documents) and the default of `truncate`; the
// rest is the body. An accepted request must respect its batch limit
// (--max-client-batch-size, OpenAI's 2048, Cohere's 96); a refused one must
// carry an HTTP error status.
#include <cstdint>
#include <cstdlib>

#include "scratch_dir.h"
#include "server/request_parse.h"
#include "server/request_parse_openai.h"

namespace {

void check(const tessera::server::ApiError& e, size_t inputs, size_t max_inputs) {
  if (e.ok()) {
    if (inputs == 0 || inputs > max_inputs) std::abort();
  } else if (e.status < 400 || e.status > 599) {
    std::abort();
  }
}

void check(const tessera::server::ApiError& e, size_t inputs,
           const tessera::server::ParseLimits& limits) {
  check(e, inputs, limits.max_client_batch_size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::server;
  if (size == 0) return 0;
  ParseLimits limits;
  limits.auto_truncate = (data[0] & 0x10) != 0;
  const std::string_view body = tessera::fuzz::as_text(data + 1, size - 1);
  switch (data[0] % 8) {
    case 0: {
      EmbedRequest r;
      const ApiError e = parse_embed_request(body, limits, &r);  // before r.inputs is read
      check(e, r.inputs.size(), limits);
      break;
    }
    case 1: {
      OpenAIRequest r;
      const ApiError e = parse_openai_request(body, limits, &r);  // before r.input is read
      check(e, r.input.size(), kOpenAIMaxInputs);
      if (e.ok() && r.input.by_ids) {
        for (const auto& ids : r.input.token_ids) {
          for (int32_t id : ids) {
            if (id < 0) std::abort();
          }
        }
      }
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
    case 5: {
      DecodeRequest r;
      const ApiError e = parse_decode_request(body, limits, &r);
      check(e, r.ids.size(), limits);
      break;
    }
    case 6: {
      CohereEmbedRequest r;
      const ApiError e = parse_cohere_embed_request(body, &r);
      check(e, r.texts.size(), kCohereMaxTexts);
      if (e.ok() && (r.types.empty() || r.types.size() != r.type_index.size())) std::abort();
      break;
    }
    default: {
      DocumentsRequest r;
      const ApiError e = parse_documents_request(body, limits, &r);
      check(e, r.texts.size(), limits);
      break;
    }
  }
  return 0;
}
