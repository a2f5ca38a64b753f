// `tessera embed`'s row options: what each output row holds.
//   --prompt-name NAME / --prompt TEXT  text prepended to every chunk
//                                       (pipeline/prompts.h)
//   --dimensions N                      the first N values, re-normalised
//   --precision P                       float32, int8, uint8, binary, ubinary
//   --quantization-ranges FILE.npy      int8 / uint8 ranges (quantization_ranges.h)
// Every check runs before any output file is created: the flags alone first
// (parse_row_flags), then against the loaded model (resolve_row_flags).
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "pipeline/embedding_model.h"
#include "pipeline/embedding_writer.h"
#include "pipeline/pipeline.h"
#include "tessera/status.h"

namespace tessera::cli {

struct RowFlags {
  std::optional<std::string> prompt_name;
  std::optional<std::string> prompt;
  std::string dimensions;  // "": all of the model's
  std::string precision = "float32";
  std::string quantization_ranges;  // "": none
};

// The flags resolved: what the writer, the fingerprint and the summary use.
struct RowOptions {
  std::string prompt;         // the text prepended; "": none
  std::string prompt_origin;  // "--prompt", "--prompt-name query", "default_prompt_name query"
  std::string prompt_name;    // the name chosen (or the model's default); "": none
  int dimensions = 0;         // values per row (after resolve_row_flags)
  int model_dim = 0;
  pipeline::RowEncoding encoding;
  int64_t ranges_dims = 0;    // the ranges file's second dimension
  std::string ranges_digest;  // pipeline::content_digest of the ranges' values
};

void add_row_flags(CLI::App* cmd, RowFlags* flags);

// Whether any row flag was given (--sparse takes none of them).
bool any_row_flag(const RowFlags& flags);

// The flags alone, before the model loads: the precision's name, the
// dimensions' number, --prompt with --prompt-name, and the ranges file
// (read and checked; required by int8 / uint8, refused by the others).
Status parse_row_flags(const RowFlags& flags, RowOptions* rows);

// Against the model: the prompt from its table (or its default), the
// dimensions within its size, ranges of the rows' size. Sets
// options->prompt and options->dimensions for resolve_options.
Status resolve_row_flags(const RowFlags& flags, const pipeline::EmbeddingModel& model,
                         RowOptions* rows, pipeline::PipelineOptions* options);

// "rows: int8 (ranges ranges.npy), 256 of 768 dimensions, prompt --prompt-name
// query: \"query: \"" for the summary (one line, no newline).
std::string describe_rows(const RowFlags& flags, const RowOptions& rows);

// The same for --summary-json: precision, dimensions, prompt, prompt_name,
// quantization_ranges.
nlohmann::json rows_to_json(const RowFlags& flags, const RowOptions& rows);

}  // namespace tessera::cli
