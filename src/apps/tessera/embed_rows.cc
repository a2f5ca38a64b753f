#include "embed_rows.h"

#include <charconv>

#include "pipeline/embedding_output.h"
#include "pipeline/job_fingerprint.h"
#include "pipeline/prompts.h"
#include "quantization_ranges.h"
#include "tessera/quantize.h"

namespace tessera::cli {

namespace {

constexpr char kRangesFlag[] = "--quantization-ranges";
// A prompt longer than this is cut in the summary line.
constexpr size_t kShownPromptChars = 60;

bool needs_ranges(Precision p) { return p == Precision::kInt8 || p == Precision::kUint8; }

// How to make the ranges file, for the error that asks for one.
std::string how_to_make_ranges(const std::string& precision) {
  return "--precision " + precision + " needs " + kRangesFlag +
         " FILE.npy: the per-dimension minimum (row 0) and maximum (row 1) of calibration "
         "embeddings, a float32 array of shape (2, dims). tessera embed streams its input, so it "
         "cannot take them from its own output. Embed a representative sample with the same "
         "--prompt and --dimensions (tessera embed SAMPLE -o calib.npy), then: python -c \"import "
         "numpy as np; e = np.load('calib.npy'); np.save('ranges.npy', np.vstack((e.min(0), "
         "e.max(0))).astype('float32'))\" (or tessera.quantization_ranges(embeddings) in Python)";
}

// A prompt as a JSON string (escaped, on one line), cut when long.
std::string show_prompt(const std::string& text) {
  std::string shown = text.size() > kShownPromptChars ? text.substr(0, kShownPromptChars) : text;
  std::string quoted =
      nlohmann::json(shown).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (shown.size() < text.size()) quoted += "...";
  return quoted;
}

}  // namespace

void add_row_flags(CLI::App* cmd, RowFlags* flags) {
  cmd->add_option_function<std::string>(
         "--prompt-name", [flags](const std::string& v) { flags->prompt_name = v; },
         "Prepend the model's prompt NAME to every text (config_sentence_transformers.json's\n"
         "\"prompts\", as sentence-transformers' encode(prompt_name=...); `tessera models\n"
         "--explain DIR` lists them). Default: the model's default_prompt_name, if any")
      ->type_name("NAME");
  cmd->add_option_function<std::string>(
         "--prompt", [flags](const std::string& v) { flags->prompt = v; },
         "Prepend TEXT to every text, e.g. \"query: \" (--prompt '' turns the model's default\n"
         "prompt off). Each chunk is [CLS] prompt chunk [SEP] (BERT's specials): the\n"
         "prompt's tokens count toward --max-tokens and are pooled with the chunk's")
      ->type_name("TEXT");
  cmd->add_option("--dimensions", flags->dimensions,
                  "Keep the first N values of every row, re-normalised when the model normalises\n"
                  "(Matryoshka models; --doc-embedding averages the shortened rows). Default: all")
      ->type_name("N");
  cmd->add_option("--precision", flags->precision,
                  "float32 | int8 | uint8 | binary | ubinary (sentence-transformers'\n"
                  "quantize_embeddings): int8 / uint8 cut each dimension's range (from\n"
                  "--quantization-ranges) into 256 buckets; binary / ubinary keep the sign bits,\n"
                  "8 per byte. JSONL rows get \"precision\" and integer \"embedding\"s; .npy is\n"
                  "int8 or uint8, [rows, dims] or [rows, ceil(dims / 8)] for the bits")
      ->type_name("P")
      ->capture_default_str();
  cmd->add_option(kRangesFlag, flags->quantization_ranges,
                  "For --precision int8 / uint8 (required): a float32 .npy of shape (2, dims),\n"
                  "the per-dimension min and max of calibration embeddings made with the same\n"
                  "--prompt and --dimensions, e.g. np.save('ranges.npy', np.vstack((e.min(0),\n"
                  "e.max(0))).astype('float32')) or tessera.quantization_ranges(e) in Python")
      ->type_name("FILE.npy");
}

bool any_row_flag(const RowFlags& flags) {
  return flags.prompt_name || flags.prompt || !flags.dimensions.empty() ||
         flags.precision != "float32" || !flags.quantization_ranges.empty();
}

Status parse_row_flags(const RowFlags& flags, RowOptions* rows) {
  if (flags.prompt_name && flags.prompt) {
    return invalid_argument("--prompt-name = \"" + *flags.prompt_name +
                            "\" and --prompt = " + show_prompt(*flags.prompt) +
                            ": give one (a prompt name, or the prompt's text)");
  }
  Precision p = Precision::kFloat32;
  TESSERA_RETURN_IF_ERROR(parse_precision(flags.precision, "--precision", &p));
  rows->encoding.precision = p;
  if (!flags.dimensions.empty()) {
    const std::string& d = flags.dimensions;
    int value = 0;
    const auto r = std::from_chars(d.data(), d.data() + d.size(), value);
    if (r.ec != std::errc() || r.ptr != d.data() + d.size()) {
      return invalid_argument("--dimensions = \"" + d.substr(0, 64) +
                              "\": not a whole number (how many of the model's dimensions "
                              "each row keeps)");
    }
    if (value < 1) {
      return invalid_argument("--dimensions = " + d + ": must be at least 1");
    }
    rows->dimensions = value;
  }
  if (flags.quantization_ranges.empty()) {
    if (needs_ranges(p)) return invalid_argument(how_to_make_ranges(flags.precision));
    return Status::Ok();
  }
  if (!needs_ranges(p)) {
    return invalid_argument(std::string(kRangesFlag) + " " + flags.quantization_ranges +
                            ": only --precision int8 and uint8 use ranges (this run's precision "
                            "is " +
                            precision_name(p) + ")");
  }
  TESSERA_RETURN_IF_ERROR(read_quantization_ranges(flags.quantization_ranges, kRangesFlag,
                                                   &rows->encoding.ranges, &rows->ranges_dims));
  rows->ranges_digest = pipeline::content_digest(
      std::string_view(reinterpret_cast<const char*>(rows->encoding.ranges.data()),
                       rows->encoding.ranges.size() * sizeof(float)));
  return Status::Ok();
}

Status resolve_row_flags(const RowFlags& flags, const pipeline::EmbeddingModel& model,
                         RowOptions* rows, pipeline::PipelineOptions* options) {
  const model::Prompts& prompts = model.prompts();
  std::string field;
  if (flags.prompt) {
    field = "--prompt";
    rows->prompt_origin = "--prompt";
  } else if (flags.prompt_name) {
    field = "--prompt-name";
    rows->prompt_origin = "--prompt-name " + *flags.prompt_name;
    rows->prompt_name = *flags.prompt_name;
  } else {
    field = "the model's default_prompt_name \"" + prompts.default_name +
            "\" (--prompt '' embeds without it)";
    rows->prompt_origin = "default_prompt_name " + prompts.default_name;
    rows->prompt_name = prompts.default_name;
  }
  TESSERA_RETURN_IF_ERROR(
      pipeline::resolve_prompt(prompts, {flags.prompt_name, flags.prompt}, field, &rows->prompt));
  if (rows->prompt.empty()) rows->prompt_origin.clear();
  options->prompt = rows->prompt;

  rows->model_dim = model.dim();
  if (rows->dimensions != 0) {
    TESSERA_RETURN_IF_ERROR(
        pipeline::check_dimensions(rows->dimensions, model.dim(), "--dimensions"));
    options->dimensions = rows->dimensions;
  } else {
    rows->dimensions = model.dim();
  }
  if (needs_ranges(rows->encoding.precision) && rows->ranges_dims != rows->dimensions) {
    return invalid_argument(
        std::string(kRangesFlag) + " " + flags.quantization_ranges + ": ranges for " +
        std::to_string(rows->ranges_dims) + " dimensions, but the rows have " +
        std::to_string(rows->dimensions) +
        (rows->dimensions == model.dim() ? " (the model's)" : " (--dimensions)") +
        ": make the ranges from embeddings with the same --dimensions");
  }
  return Status::Ok();
}

std::string describe_rows(const RowFlags& flags, const RowOptions& rows) {
  std::string s = "rows: ";
  s += precision_name(rows.encoding.precision);
  if (!flags.quantization_ranges.empty()) s += " (ranges " + flags.quantization_ranges + ")";
  s += ", ";
  if (rows.dimensions != rows.model_dim) {
    s += std::to_string(rows.dimensions) + " of " + std::to_string(rows.model_dim) + " dimensions";
  } else {
    s += std::to_string(rows.dimensions) + " dimensions";
  }
  if (rows.encoding.precision == Precision::kBinary ||
      rows.encoding.precision == Precision::kUbinary) {
    s += " (" + std::to_string(quantized_row_bytes(rows.encoding.precision, rows.dimensions)) +
         " bytes of bits)";
  }
  s += rows.prompt.empty() ? ", no prompt"
                           : ", prompt " + rows.prompt_origin + ": " + show_prompt(rows.prompt);
  return s;
}

nlohmann::json rows_to_json(const RowFlags& flags, const RowOptions& rows) {
  nlohmann::json j = {{"precision", precision_name(rows.encoding.precision)},
                      {"dimensions", rows.dimensions},
                      {"prompt", nullptr},
                      {"prompt_name", nullptr},
                      {"quantization_ranges", nullptr}};
  if (!rows.prompt.empty()) j["prompt"] = rows.prompt;
  if (!rows.prompt_name.empty()) j["prompt_name"] = rows.prompt_name;
  if (!flags.quantization_ranges.empty()) j["quantization_ranges"] = flags.quantization_ranges;
  return j;
}

}  // namespace tessera::cli
