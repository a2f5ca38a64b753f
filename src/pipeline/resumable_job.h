// ResumableJob: the output side of `tessera embed --resume`, a job that
// survives being killed (kill -9, OOM, a reboot) with no row lost or repeated.
//
// Files beside OUTPUT while the job runs:
//   OUTPUT.partial (+ INDEX.partial for .npy)  the rows written so far
//   OUTPUT.checkpoint.json                     what of them is committed
// Protocol (the pipeline's rounds are the row groups; a document never spans
// two): after each round the partial files are fsynced, then the checkpoint is
// replaced atomically with the items of the input done and the files'
// committed lengths. Whenever the process dies, the checkpoint on disk
// describes a prefix of the partial files. A new run with --resume checks the
// job fingerprint (job_fingerprint.h), cuts the partial files to the
// committed lengths (the torn tail of the round in flight), skips the
// committed items of the input (the reader yields them in the same order) and
// appends the rest. At the end the final position is checkpointed as
// complete, the partial files are renamed to their names, and the checkpoint
// is removed; a kill between those steps is finished by the next --resume.
// A second process resuming the same output while one runs is refused (an
// flock on OUTPUT.partial, released by the kernel when the holder dies).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "pipeline/checkpoint.h"
#include "pipeline/document_reader.h"
#include "pipeline/embedding_writer.h"
#include "pipeline/pipeline.h"
#include "tessera/status.h"

namespace tessera::pipeline {

class ResumableJob {
 public:
  enum class Start {
    kNew,       // no checkpoint: a new job, from the first document
    kContinue,  // an interrupted job: committed() items are done
    kFinished,  // the checkpoint said complete: this run only renamed files
    kNothing,   // no checkpoint and OUTPUT exists: nothing to resume
  };

  ~ResumableJob();
  ResumableJob(const ResumableJob&) = delete;
  ResumableJob& operator=(const ResumableJob&) = delete;

  // `job` is the fingerprint of this run (job_fingerprint()); `encoding`
  // how the writer stores rows of `dim` values (part of the fingerprint).
  // Errors: the checkpoint belongs to a different job (names the first field
  // that differs), is damaged, or the output is being resumed by another
  // process.
  static Status open(const std::string& output, bool npy, int dim, nlohmann::json job,
                     std::unique_ptr<ResumableJob>* out, const RowEncoding& encoding = {});

  Start start() const { return start_; }
  // What earlier runs committed (zero for a new job).
  const JobTotals& committed() const { return base_; }
  // The job's totals with this run's stats added.
  JobTotals totals(const PipelineStats& run) const;
  // Writes to the partial files (kNew and kContinue only).
  EmbeddingWriter& writer() { return *writer_; }

  // Reads and drops the committed items, so `reader` continues with the first
  // item not yet written. Error if the input ends first.
  Status skip_committed(DocumentReader& reader) const;
  // PipelineCallbacks::on_round_written: syncs the rows and checkpoints them.
  Status commit(const PipelineStats& run);
  // After the pipeline succeeded: complete, rename, remove the checkpoint.
  Status finish(const PipelineStats& run);

 private:
  ResumableJob(std::string output, bool npy) : output_(std::move(output)), npy_(npy) {}
  Status lock(bool create);
  Status publish() const;  // renames the partial files that are still there

  std::string output_;
  bool npy_;
  std::string checkpoint_path_;
  Start start_ = Start::kNew;
  Checkpoint checkpoint_;
  JobTotals base_;
  std::unique_ptr<EmbeddingWriter> writer_;
  int lock_fd_ = -1;
};

}  // namespace tessera::pipeline
