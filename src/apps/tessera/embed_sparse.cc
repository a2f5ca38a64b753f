#include "embed_sparse.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "pipeline/atomic_file.h"
#include "pipeline/text_scoring.h"

namespace tessera::cli {

namespace {

// Documents embedded per model call group: bounds the texts held at once.
constexpr size_t kRoundDocuments = 256;

class SparseOutput {
 public:
  Status open(const std::string& path) {
    to_stdout_ = path.empty() || path == "-";
    return to_stdout_ ? Status::Ok() : file_.open(path);
  }
  Status write(const std::string& text) {
    if (!to_stdout_) return file_.write(text);
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) {
      return internal_error("cannot write to stdout");
    }
    return Status::Ok();
  }
  Status finish() {
    if (!to_stdout_) return file_.commit();
    return std::fflush(stdout) == 0 ? Status::Ok() : internal_error("cannot write to stdout");
  }

 private:
  bool to_stdout_ = true;
  pipeline::AtomicFile file_;  // removes its temporary file unless committed
};

Status embed_round(std::vector<pipeline::Document>& docs, pipeline::EmbeddingModel& model,
                   int64_t batch_tokens, Context& ctx, SparseOutput& out) {
  if (docs.empty()) return Status::Ok();
  std::vector<std::string> texts;
  texts.reserve(docs.size());
  for (pipeline::Document& d : docs) texts.push_back(std::move(d.text));
  pipeline::TextOptions options;
  options.truncate = true;
  options.batch_tokens = batch_tokens;
  std::vector<std::string> lines(docs.size());
  std::vector<int32_t> indices;
  std::vector<float> values;
  TESSERA_RETURN_IF_ERROR(pipeline::embed_sparse_texts(
      model, texts, options, ctx, [&](int64_t i, const float* row) {
        pipeline::sparsify(row, model.sparse_dim(), &indices, &values);
        nlohmann::ordered_json j = {{"id", docs[i].id}, {"indices", indices}, {"values", values}};
        lines[i] = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
      }));
  for (const std::string& line : lines) TESSERA_RETURN_IF_ERROR(out.write(line));
  docs.clear();
  return Status::Ok();
}

}  // namespace

Status run_sparse_embedding(pipeline::DocumentReader& reader, pipeline::EmbeddingModel& model,
                            const std::string& output, int64_t batch_tokens, Context& ctx,
                            SparseRunStats* stats) {
  SparseOutput out;
  TESSERA_RETURN_IF_ERROR(out.open(output));
  std::vector<pipeline::Document> round;
  pipeline::Document doc;
  pipeline::Problem problem;
  for (;;) {
    const auto item = reader.next(&doc, &problem);
    if (item == pipeline::DocumentReader::Item::kEnd) break;
    if (item == pipeline::DocumentReader::Item::kProblem) {
      std::fprintf(stderr, "tessera: skipped %s: %s\n", problem.origin.c_str(),
                   problem.message.c_str());
      ++stats->skipped;
      continue;
    }
    if (doc.text.empty()) {
      std::fprintf(stderr, "tessera: skipped %s: empty document\n", doc.origin.c_str());
      ++stats->skipped;
      continue;
    }
    round.push_back(std::move(doc));
    ++stats->documents;
    if (round.size() == kRoundDocuments) {
      TESSERA_RETURN_IF_ERROR(embed_round(round, model, batch_tokens, ctx, out));
    }
  }
  TESSERA_RETURN_IF_ERROR(embed_round(round, model, batch_tokens, ctx, out));
  return out.finish();
}

}  // namespace tessera::cli
