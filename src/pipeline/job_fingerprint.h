// What must not change between an interrupted `tessera embed --resume` run and
// the run that continues it: everything that decides which rows the output
// holds and what their embeddings mean. Continuing with a different input or
// model would splice two different jobs into one file without a trace, so the
// checkpoint records this fingerprint and a mismatch refuses to resume.
//
// In: the input files in reading order (path as given, since .txt ids are
// paths; size; mtime in ns; past 1,000 files a count, total and digest),
// every file of the model directory (relative
// path, size, mtime), the weight precision, the window options, the row kind
// (chunks or --doc-embedding), the output format, and what shapes each row:
// the prompt text (--prompt / --prompt-name, or the model's default),
// --dimensions, --precision and a digest of the --quantization-ranges
// values (these four only when set, so that a checkpoint written before they
// existed still resumes a job that uses none of them). Out on purpose:
// --batch-tokens, --attention, --threads and the memory budget: they change
// speed and rounding only (the last bits of an embedding), and a job killed
// for memory must be able to continue with a smaller batch.
// Size + mtime, not a content hash: hashing a corpus on every resume would
// cost a full read; an in-place edit that keeps both is not detected.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/windowing.h"

namespace tessera::pipeline {

struct JobDescription {
  std::vector<std::string> inputs;  // DocumentReader::input_paths()
  std::string model_dir;
  std::string weights;   // "f32" / "bf16"
  WindowOptions window;  // resolved (no defaults left)
  bool doc_embedding = false;
  bool npy = false;
  std::string prompt;         // the text prepended to every chunk; "": none
  int dimensions = 0;         // rows cut to this many values; 0: the model's all
  std::string precision;      // quantized rows ("int8", ...); "" or "float32": floats
  std::string ranges_digest;  // content_digest of the int8 / uint8 ranges; "": none
};

// A short hex digest of `bytes` (FNV-1a 64: notices a change between runs,
// not cryptographic).
std::string content_digest(std::string_view bytes);

// Reads the sizes and times now.
nlohmann::json job_fingerprint(const JobDescription& job);

// "" when equal; else the first field that differs, with both values
// (rendered bounded), e.g.
//   inputs[2] (corpus/b.txt): size is 1250, the checkpoint has 1200
std::string describe_difference(const nlohmann::json& checkpoint, const nlohmann::json& now);

}  // namespace tessera::pipeline
