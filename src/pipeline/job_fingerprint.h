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
// (chunks or --doc-embedding) and the output format. Out on purpose:
// --batch-tokens, --attention, --threads and the memory budget: they change
// speed and rounding only (the last bits of an embedding), and a job killed
// for memory must be able to continue with a smaller batch.
// Size + mtime, not a content hash: hashing a corpus on every resume would
// cost a full read; an in-place edit that keeps both is not detected.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
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
};

// Reads the sizes and times now.
nlohmann::json job_fingerprint(const JobDescription& job);

// "" when equal; else the first field that differs, with both values
// (rendered bounded), e.g.
//   inputs[2] (corpus/b.txt): size is 1250, the checkpoint has 1200
std::string describe_difference(const nlohmann::json& checkpoint, const nlohmann::json& now);

}  // namespace tessera::pipeline
