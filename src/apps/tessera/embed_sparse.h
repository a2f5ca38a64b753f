// `tessera embed --sparse`: SPLADE vectors of documents as JSONL rows
// {"id", "indices", "values"}, one per document (cut to the model's
// max_seq_length, as sentence-transformers' SparseEncoder and TEI's
// /embed_sparse with truncate do).
#pragma once

#include <string>
#include <vector>

#include "pipeline/document_reader.h"
#include "pipeline/embedding_model.h"
#include "tessera/context.h"
#include "tessera/status.h"

namespace tessera::cli {

struct SparseRunStats {
  int64_t documents = 0;
  int64_t skipped = 0;
};

// Reads every document of `reader`, embeds them in groups of
// `round_documents`, writes one line each to `output` ("" or "-": stdout;
// else written whole to a temporary file and renamed). Problems (and empty
// documents) are reported on stderr and counted as skipped.
Status run_sparse_embedding(pipeline::DocumentReader& reader, pipeline::EmbeddingModel& model,
                            const std::string& output, int64_t batch_tokens, Context& ctx,
                            SparseRunStats* stats);

}  // namespace tessera::cli
