// The checkpoint of a resumable `tessera embed` job: a small JSON file beside
// the output (OUTPUT.checkpoint.json) saying how much of the job is done and
// durable. It is replaced atomically (write a temporary, fsync, rename, fsync
// the directory), so at any moment the file on disk is one complete version.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "pipeline/embedding_writer.h"
#include "tessera/status.h"

namespace tessera::pipeline {

// Counts over every run of the job so far.
struct JobTotals {
  int64_t items = 0;      // reader items done: documents and reported input problems
  int64_t documents = 0;  // embedded and written
  int64_t skipped = 0;    // reported and skipped
  int64_t chunks = 0;
  int64_t rows = 0;
};

// (nlohmann::json's noexcept move checks an invariant that clang-tidy 14
// cannot prove non-throwing, hence the NOLINT on the implicit move.)
struct Checkpoint {  // NOLINT(bugprone-exception-escape)
  nlohmann::json job;     // job_fingerprint() of the run that started the job
  JobTotals done;         // the first done.items items of the input are written
  OutputPosition output;  // the partial files' committed rows and lengths
  bool complete = false;  // every item written; only the renames may be left
};

std::string checkpoint_path(const std::string& output);

// *found false (and OK) when there is no checkpoint. A file that is not a
// checkpoint, or one with impossible numbers, is an error naming the file and
// the field.
Status load_checkpoint(const std::string& path, Checkpoint* out, bool* found);
Status save_checkpoint(const std::string& path, const Checkpoint& checkpoint);
// Removes the checkpoint (the job's last step) and syncs the directory.
Status remove_checkpoint(const std::string& path);

}  // namespace tessera::pipeline
