// tessera embed INPUT... [-o FILE] [--model DIR] [--format jsonl|npy] ...
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "embed_resume.h"
#include "embed_rows.h"
#include "embed_sparse.h"
#include "model/encoder.h"
#include "model_options.h"
#include "pipeline/atomic_file.h"
#include "pipeline/document_reader.h"
#include "pipeline/embedding_writer.h"
#include "pipeline/encoder_model.h"
#include "pipeline/model_kind.h"
#include "pipeline/pipeline.h"
#include "pipeline/report.h"
#include "pipeline/temp_files.h"
#include "runtime/signal_watcher.h"

namespace tessera::cli {

namespace {

// Exit codes of `tessera embed` (also in its --help).
constexpr int kExitOk = 0;
constexpr int kExitFatal = 1;
constexpr int kExitUsage = 2;
constexpr int kExitSkipped = 3;
// Stopped by SIGINT / SIGTERM: 128 + the signal's number, as a shell reports
// a process the signal killed (130, 143).
constexpr int kExitSignalBase = 128;

struct EmbedOptions {
  std::vector<std::string> inputs;
  std::string output;
  ModelFlags model;
  std::string format;  // "" = from the output name
  std::string stdin_format = "text";
  std::string summary_json;
  bool resume = false;
  bool sparse = false;
  std::string round_bytes;                 // "": the pipeline's default
  std::string max_document_bytes = "64M";  // pipeline::kDefaultMaxDocumentBytes
  RowFlags rows;
  pipeline::PipelineOptions pipeline;
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

long long ll(int64_t v) { return static_cast<long long>(v); }

// Runs on the signal watcher's thread (an ordinary thread, so it may print and
// lock): the unfinished output goes (temp_files.h); --resume's committed rows
// stay, as after any kill.
[[noreturn]] void stop_on_signal(int signo, const EmbedOptions& opt) {
  const char* name = signo == SIGINT ? "SIGINT" : "SIGTERM";
  if (opt.resume) {
    std::fprintf(stderr,
                 "tessera: %s: stopped; the committed rows are kept in %s: run again with "
                 "--resume to continue\n",
                 name, pipeline::AtomicFile::partial_path(opt.output).c_str());
  } else {
    std::fprintf(stderr, "tessera: %s: stopped; the unfinished output was removed\n", name);
  }
  pipeline::temp_files::remove_all_and_exit(kExitSignalBase + signo);
}

// --sparse refuses the dense-only options before any model is loaded.
Status check_sparse_flags(const EmbedOptions& opt) {
  const bool npy = opt.format.empty() ? ends_with(opt.output, ".npy") : opt.format == "npy";
  if (npy) {
    return invalid_argument(
        "--sparse writes JSONL rows {\"id\", \"indices\", \"values\"}: .npy output (a dense "
        "[rows, dim] array) cannot hold sparse vectors; write to a .jsonl file or stdout");
  }
  if (opt.resume || opt.pipeline.doc_embedding) {
    return invalid_argument("--sparse cannot be combined with --resume or --doc-embedding");
  }
  if (any_row_flag(opt.rows)) {
    return invalid_argument(
        "--sparse cannot be combined with --prompt-name, --prompt, --dimensions, --precision or "
        "--quantization-ranges (options of dense rows)");
  }
  return Status::Ok();
}

int run_embed_sparse(AppState& state, EmbedOptions& opt) {
  if (Status s = check_sparse_flags(opt); !s.ok()) return fail(s, kExitUsage);
  if (Status s = state.init(); !s.ok()) return fail(s, kExitUsage);
  std::string model_dir;
  std::unique_ptr<model::Encoder> encoder;
  if (Status s = load_encoder(opt.model, state.context(), &model_dir, &encoder); !s.ok()) {
    return fail(s, kExitUsage);
  }
  pipeline::EncoderModel model(std::move(encoder), state.dispatcher());
  if (Status s =
          pipeline::require_kind(model, ModelKind::kSparse, "tessera embed --sparse " + model_dir,
                                 "a SPLADE model (*ForMaskedLM)");
      !s.ok()) {
    return fail(s, kExitUsage);
  }
  pipeline::ReaderOptions reader_options;
  reader_options.stdin_format =
      opt.stdin_format == "jsonl" ? pipeline::StdinFormat::kJsonl : pipeline::StdinFormat::kText;
  std::unique_ptr<pipeline::DocumentReader> reader;
  if (Status s = pipeline::DocumentReader::open(opt.inputs, reader_options, &reader); !s.ok()) {
    return fail(s, kExitUsage);
  }
  SparseRunStats stats;
  const int64_t batch_tokens =
      opt.pipeline.batch_tokens > 0 ? opt.pipeline.batch_tokens : pipeline::kDefaultBatchTokens;
  if (Status s =
          run_sparse_embedding(*reader, model, opt.output, batch_tokens, state.context(), &stats);
      !s.ok()) {
    return fail(s, kExitFatal);
  }
  return stats.skipped > 0 ? kExitSkipped : kExitOk;
}

int run_embed(AppState& state, EmbedOptions& opt) {
  if (opt.sparse) return run_embed_sparse(state, opt);
  if (opt.resume) {
    if (Status s = check_resume_flags(opt.output, opt.inputs); !s.ok()) return fail(s, kExitUsage);
  }
  if (!opt.round_bytes.empty()) {
    size_t bytes = 0;
    if (Status s = parse_byte_size(opt.round_bytes, "--round-bytes", &bytes); !s.ok()) {
      return fail(s, kExitUsage);
    }
    if (bytes == 0) return fail(invalid_argument("--round-bytes = 0: give at least 1"), kExitUsage);
    opt.pipeline.round_bytes = static_cast<int64_t>(bytes);
  }
  size_t max_document_bytes = 0;
  if (Status s =
          parse_byte_size(opt.max_document_bytes, "--max-document-bytes", &max_document_bytes);
      !s.ok()) {
    return fail(s, kExitUsage);
  }
  if (max_document_bytes == 0) {
    return fail(invalid_argument("--max-document-bytes = 0: give at least 1"), kExitUsage);
  }
  RowOptions rows;
  if (Status s = parse_row_flags(opt.rows, &rows); !s.ok()) return fail(s, kExitUsage);
  // Before any thread exists (state.init() starts the pool), so that every
  // thread inherits the mask and the watcher alone receives SIGINT / SIGTERM.
  SignalWatcher::block_stop_signals();
  const SignalWatcher watcher([&opt](int signo) { stop_on_signal(signo, opt); });
  if (Status s = state.init(); !s.ok()) return fail(s, kExitUsage);
  Context& ctx = state.context();
  const auto start = std::chrono::steady_clock::now();

  std::string model_dir;
  std::unique_ptr<model::Encoder> encoder;
  if (Status s = load_encoder(opt.model, ctx, &model_dir, &encoder); !s.ok()) {
    return fail(s, kExitUsage);
  }
  pipeline::EncoderModel model(std::move(encoder), state.dispatcher());
  if (Status s = pipeline::require_kind(model, ModelKind::kEmbedding, "tessera embed " + model_dir,
                                        "an embedding model (for a SPLADE model add --sparse; "
                                        "for a reranker use tessera rerank)");
      !s.ok()) {
    return fail(s, kExitUsage);
  }
  const double load_seconds = seconds_since(start);
  if (Status s = resolve_row_flags(opt.rows, model, &rows, &opt.pipeline); !s.ok()) {
    return fail(s, kExitUsage);
  }
  if (Status s = pipeline::resolve_options(model, &opt.pipeline); !s.ok()) {
    return fail(s, kExitUsage);
  }

  pipeline::ReaderOptions reader_options;
  reader_options.stdin_format =
      opt.stdin_format == "jsonl" ? pipeline::StdinFormat::kJsonl : pipeline::StdinFormat::kText;
  reader_options.max_document_bytes = max_document_bytes;
  std::unique_ptr<pipeline::DocumentReader> reader;
  if (Status s = pipeline::DocumentReader::open(opt.inputs, reader_options, &reader); !s.ok()) {
    return fail(s, kExitUsage);
  }
  const bool npy = opt.format.empty() ? ends_with(opt.output, ".npy") : opt.format == "npy";
  std::unique_ptr<pipeline::ResumableJob> job;
  std::unique_ptr<pipeline::EmbeddingWriter> own_writer;
  pipeline::EmbeddingWriter* writer = nullptr;
  if (opt.resume) {
    const pipeline::JobDescription description{
        reader->input_paths(),
        model_dir,
        model::weight_precision_name(model.encoder().weight_precision()),
        opt.pipeline.window,
        opt.pipeline.doc_embedding,
        npy,
        rows.prompt,
        rows.dimensions == model.dim() ? 0 : rows.dimensions,
        precision_name(rows.encoding.precision),
        rows.ranges_digest};
    if (Status s = start_resumable_job(opt.output, description, rows.dimensions, rows.encoding,
                                       *reader, &job);
        !s.ok()) {
      return fail(s, kExitUsage);
    }
    if (job->start() == pipeline::ResumableJob::Start::kNothing) return kExitOk;
    if (job->start() == pipeline::ResumableJob::Start::kFinished) {
      return job->committed().skipped > 0 ? kExitSkipped : kExitOk;
    }
    writer = &job->writer();
  } else {
    pipeline::WriterOptions writer_options;
    writer_options.encoding = rows.encoding;
    Status open_status =
        npy ? pipeline::make_npy_writer(opt.output, rows.dimensions, &own_writer, writer_options)
            : pipeline::make_jsonl_writer(opt.output, rows.dimensions, &own_writer, writer_options);
    if (!open_status.ok()) return fail(open_status, kExitUsage);
    writer = own_writer.get();
  }

  pipeline::ProgressBar progress(stderr, ::isatty(STDERR_FILENO) != 0);
  pipeline::PipelineCallbacks callbacks;
  callbacks.on_problem = [&](const pipeline::Problem& p) {
    progress.clear();
    std::fprintf(stderr, "tessera: skipped %s: %s\n", p.origin.c_str(), p.message.c_str());
  };
  callbacks.on_progress = [&](const pipeline::PipelineStats& s, uint64_t read, uint64_t total) {
    progress.update(s, read, total);
  };
  if (job != nullptr) {
    callbacks.on_round_written = [&](const pipeline::PipelineStats& s) { return job->commit(s); };
  }
  pipeline::PipelineStats stats;
  Status run_status =
      pipeline::run_pipeline(*reader, model, opt.pipeline, *writer, ctx, callbacks, &stats);
  if (run_status.ok()) run_status = job != nullptr ? job->finish(stats) : writer->finish();
  progress.clear();
  if (!run_status.ok()) {
    const std::string what = job != nullptr ? " (the rows committed so far are kept in " +
                                                  pipeline::AtomicFile::partial_path(opt.output) +
                                                  ": run again with --resume to continue)"
                                            : " (nothing was written)";
    job.reset();         // closes the partial files, which stay for the next --resume
    own_writer.reset();  // removes the unfinished output
    return fail(Status(run_status.code(), run_status.message() + what), kExitFatal);
  }

  std::fprintf(stderr, "%sweights: %s, loaded in %.2f s\n%s\n",
               pipeline::format_summary(stats, ctx.allocator().peak_bytes()).c_str(),
               describe_weights(model.encoder()).c_str(), load_seconds,
               describe_rows(opt.rows, rows).c_str());
  int64_t job_skipped = stats.skipped;
  if (job != nullptr && job->start() == pipeline::ResumableJob::Start::kContinue) {
    const pipeline::JobTotals total = job->totals(stats);
    std::fprintf(stderr,
                 "resumed: %lld input documents were done by earlier runs; the whole job: %lld "
                 "documents (%lld skipped), %lld rows\n",
                 ll(job->committed().items), ll(total.documents), ll(total.skipped),
                 ll(total.rows));
    job_skipped = total.skipped;
  }
  if (!opt.summary_json.empty()) {
    nlohmann::json j = pipeline::stats_to_json(stats);
    if (job != nullptr) {
      const pipeline::JobTotals total = job->totals(stats);
      j["resume"] = {{"skipped_items", job->committed().items},
                     {"kept_rows", job->committed().rows},
                     {"job_documents", total.documents},
                     {"job_skipped", total.skipped},
                     {"job_rows", total.rows}};
    }
    j["model"] = model_dir;
    j["load_seconds"] = load_seconds;
    j["total_seconds"] = seconds_since(start);
    j["peak_tracked_bytes"] = ctx.allocator().peak_bytes();
    j["weight_bytes"] = model.encoder().weight_bytes();
    j["weights"] = model::weight_precision_name(model.encoder().weight_precision());
    j.update(rows_to_json(opt.rows, rows));  // precision, dimensions, prompt, ...
    std::ofstream f(opt.summary_json);
    f << j.dump(2) << "\n";
    if (!f) {
      std::fprintf(stderr, "tessera: cannot write --summary-json %s\n", opt.summary_json.c_str());
    }
  }
  return job_skipped > 0 ? kExitSkipped : kExitOk;
}

}  // namespace

void add_embed_command(CLI::App& app, AppState& state) {
  static EmbedOptions opt;
  auto* cmd = app.add_subcommand(
      "embed",
      "Embed documents with a sentence-transformers or HF model (`tessera models` lists the\n"
      "architectures: BERT, MPNet, RoBERTa, XLM-RoBERTa, CamemBERT). Long documents are split\n"
      "into overlapping token windows; each chunk keeps its document id and its offsets [begin,\n"
      "end) in Unicode code points into the original text. Output rows are in input order.");
  cmd->add_option("inputs", opt.inputs,
                  "Files (.jsonl: one {\"id\": ..., \"text\": ...} per line; any other: one\n"
                  "document), directories (recursively *.txt, *.md, *.jsonl) or - (stdin)")
      ->required();
  cmd->add_option("-o,--output", opt.output,
                  "Output file (default: JSONL on stdout). Written to a temporary file and\n"
                  "renamed at the end: nothing partial is left on a fatal error (with\n"
                  "--resume, the committed rows are kept for the next run)");
  add_model_options(cmd, &opt.model);
  cmd->add_option("--format", opt.format,
                  "jsonl: {\"id\", \"chunk\", \"offsets\", \"embedding\"} per row; npy: float32\n"
                  "[rows, dim] (or --precision's integers) plus an index NAME.index.jsonl.\n"
                  "Default: npy if -o ends in .npy")
      ->check(CLI::IsMember({"jsonl", "npy"}));
  cmd->add_option("--stride", opt.pipeline.window.stride,
                  "Most tokens shared by consecutive windows of a long document (default 32,\n"
                  "or a quarter of the window when that is smaller). Windows start and end\n"
                  "between words and prefer paragraph, line and sentence boundaries");
  cmd->add_option("--max-tokens", opt.pipeline.window.max_tokens,
                  "Tokens per chunk, the model's special tokens included ([CLS] and [SEP];\n"
                  "one <|endoftext|>...). Default: the model's max_seq_length; a document\n"
                  "that fits is one chunk (8192 for a long-context model)");
  cmd->add_option("--batch-tokens", opt.pipeline.batch_tokens,
                  "Token budget of one encoder batch (chunks sorted by length, packed without\n"
                  "padding). Default: 8192, or --max-tokens when that is larger");
  cmd->add_flag("--doc-embedding", opt.pipeline.doc_embedding,
                "One row per document instead of per chunk: the mean of its chunks,\n"
                "re-normalized; rows have \"chunks\" (how many) instead of \"chunk\"");
  cmd->add_option("--stdin-format", opt.stdin_format,
                  "How to read '-': text (one document) or jsonl")
      ->check(CLI::IsMember({"text", "jsonl"}))
      ->capture_default_str();
  cmd->add_option("--max-document-bytes", opt.max_document_bytes,
                  "Largest document read, e.g. 64M: a file, stdin (text) or JSONL line over it\n"
                  "is skipped and reported, never held in memory whole (exit 3)")
      ->capture_default_str();
  cmd->add_flag("--sparse", opt.sparse,
                "SPLADE models (*ForMaskedLM): one sparse vector per document, cut to the\n"
                "model's max_seq_length, as JSONL {\"id\", \"indices\", \"values\"} (nonzero\n"
                "token ids ascending and their weights). No windows; .npy output is refused");
  add_row_flags(cmd, &opt.rows);
  cmd->add_option("--summary-json", opt.summary_json,
                  "Also write the run's figures (counts, seconds, attention, stages) as JSON");
  cmd->add_option("--round-bytes", opt.round_bytes,
                  "Text read per round, e.g. 64K (default 256K): a round is read, embedded and\n"
                  "written before the next, which bounds memory; with --resume each round is\n"
                  "one commit, so a kill loses at most one round of work");
  cmd->add_flag("--resume", opt.resume,
                "Make the job survive being killed, and continue it: rows go to OUTPUT.partial\n"
                "(.npy: also INDEX.partial), committed after every round (--round-bytes of\n"
                "text) to OUTPUT.checkpoint.json. After a crash run the same command again: the\n"
                "torn tail is cut, the documents already written are skipped, the rest is\n"
                "appended; OUTPUT appears when all is done. Refused, naming what changed, if the\n"
                "inputs (paths, sizes, mtimes), the model, --weights, --max-tokens, --stride,\n"
                "--doc-embedding, the format, the prompt, --dimensions, --precision or the\n"
                "--quantization-ranges values differ (--batch-tokens, --attention, --threads\n"
                "may). Needs -o FILE and file inputs (not stdin). If OUTPUT exists with no\n"
                "checkpoint, there is nothing to resume (exit 0)");
  cmd->footer(
      "Exit codes: 0 every document embedded; 3 some documents were skipped (each reported on\n"
      "stderr: unreadable file, not a regular file (a FIFO, a device), over\n"
      "--max-document-bytes, invalid UTF-8, empty document, malformed JSONL line), the others\n"
      "written; 2 usage or model error (a named input that does not exist included), or a\n"
      "--resume that does not match its checkpoint; 1\n"
      "fatal error while embedding or writing (nothing written; with --resume the committed\n"
      "rows are kept for the next run); 130 / 143 stopped by SIGINT / SIGTERM (the same: the\n"
      "unfinished output is removed, --resume keeps the committed rows).");
  cmd->callback([&state] { exit_code = run_embed(state, opt); });
}

}  // namespace tessera::cli
