// tessera rerank --query Q FILE|- [--model DIR] [--top-k N] [--raw-scores] [--return-text]
// A cross-encoder scores (query, text) for every text; the ranking is
// printed best first as JSONL. Framing, truncation and batching are the
// pipeline's (pipeline/text_scoring.h), as the server's /rerank.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "commands.h"
#include "model_options.h"
#include "pipeline/encoder_model.h"
#include "pipeline/model_kind.h"
#include "pipeline/text_scoring.h"
#include "runtime/json_input.h"

namespace tessera::cli {

namespace {

constexpr int kRerankOk = 0;
constexpr int kRerankFailed = 1;
constexpr int kRerankUsage = 2;

struct RerankOptions {
  std::string input;
  std::string query;
  ModelFlags model;
  int top_k = 0;  // 0: all
  bool raw_scores = false;
  bool return_text = false;
  bool truncate = true;
  int64_t batch_tokens = 8192;
};

// One text per line, or JSONL lines {"text": ...} when every non-empty line
// starts with '{'. Empty lines are skipped in text mode.
Status read_texts(const std::string& path, std::vector<std::string>* out) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    file.open(path);
    if (!file) return not_found(path + ": cannot open");
    in = &file;
  }
  std::string line;
  for (int64_t number = 1; std::getline(*in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line.front() != '{') {
      out->push_back(line);
      continue;
    }
    nlohmann::json j;
    const std::string where = path + ":" + std::to_string(number);
    TESSERA_RETURN_IF_ERROR(json_input::parse(line, where, &j));
    if (!j.is_object() || !j.contains("text") || !j["text"].is_string()) {
      return invalid_argument(where + ": a JSONL line needs a string field \"text\"");
    }
    out->push_back(j["text"].get<std::string>());
  }
  if (out->empty()) return invalid_argument(path + ": no texts to rank");
  return Status::Ok();
}

int run_rerank(AppState& state, const RerankOptions& opt) {
  if (opt.top_k < 0) return fail(invalid_argument("--top-k must be >= 0"), kRerankUsage);
  std::vector<std::string> texts;
  if (Status s = read_texts(opt.input, &texts); !s.ok()) return fail(s, kRerankUsage);
  if (Status s = state.init(); !s.ok()) return fail(s, kRerankUsage);
  std::string dir;
  std::unique_ptr<model::Encoder> encoder;
  if (Status s = load_encoder(opt.model, state.context(), &dir, &encoder); !s.ok()) {
    return fail(s, kRerankUsage);
  }
  pipeline::EncoderModel model(std::move(encoder), state.dispatcher());
  if (Status s = pipeline::require_kind(model, ModelKind::kReranker, "tessera rerank " + dir,
                                        "a reranker (a cross-encoder with 1 label)");
      !s.ok()) {
    return fail(s, kRerankUsage);
  }
  std::vector<pipeline::ScoreInput> pairs;
  pairs.reserve(texts.size());
  for (const std::string& t : texts) pairs.push_back({opt.query, t});
  pipeline::TextOptions options;
  options.truncate = opt.truncate;
  options.batch_tokens = opt.batch_tokens;
  options.field = "text";
  options.truncate_hint = "drop --no-truncate to cut it";
  std::vector<float> scores(texts.size());
  if (Status s = pipeline::score_inputs(model, pairs, options, state.context(), scores.data());
      !s.ok()) {
    return fail(s, kRerankFailed);
  }
  if (!opt.raw_scores) {
    for (float& s : scores) s = static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(s))));
  }
  std::vector<size_t> order(texts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  const size_t shown = opt.top_k > 0 ? std::min(order.size(), static_cast<size_t>(opt.top_k))
                                     : order.size();
  for (size_t r = 0; r < shown; ++r) {
    nlohmann::ordered_json row = {{"index", order[r]}, {"score", scores[order[r]]}};
    if (opt.return_text) row["text"] = texts[order[r]];
    std::printf("%s\n", row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  }
  return std::fflush(stdout) == 0 ? kRerankOk : kRerankFailed;
}

}  // namespace

void add_rerank_command(CLI::App& app, AppState& state) {
  static RerankOptions opt;
  auto* cmd = app.add_subcommand(
      "rerank",
      "Rank texts by relevance to a query with a cross-encoder (a BERT / XLM-R\n"
      "*ForSequenceClassification model with 1 label, e.g. ms-marco-MiniLM, bge-reranker).\n"
      "Prints one JSON line per text, best first: {\"index\", \"score\", \"text\"?}; index is\n"
      "the text's 0-based position in the input.");
  cmd->add_option("input", opt.input,
                  "Texts to rank: a file or - (stdin), one text per line, or JSONL lines\n"
                  "{\"text\": ...}; empty lines are skipped")
      ->required();
  cmd->add_option("-q,--query", opt.query, "The query every text is paired with")->required();
  add_model_options(cmd, &opt.model);
  cmd->add_option("--top-k", opt.top_k, "Print only the best K texts (default: all)");
  cmd->add_flag("--raw-scores", opt.raw_scores,
                "Print the model's raw logits instead of sigmoid(logit) in [0, 1] (TEI's\n"
                "raw_scores; the order is the same)");
  cmd->add_flag("--return-text", opt.return_text, "Add each text to its line");
  cmd->add_flag("!--no-truncate", opt.truncate,
                "Fail on a (query, text) pair longer than the model's max_seq_length instead of\n"
                "cutting it (longest first, as HF tokenizers)");
  cmd->add_option("--batch-tokens", opt.batch_tokens, "Token budget of one encoder batch")
      ->capture_default_str();
  cmd->footer("Exit codes: 0 ranked; 2 usage, input or model error (e.g. not a reranker);\n"
              "1 the model failed.");
  cmd->callback([&state] { exit_code = run_rerank(state, opt); });
}

}  // namespace tessera::cli
