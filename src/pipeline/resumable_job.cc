#include "pipeline/resumable_job.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "pipeline/atomic_file.h"
#include "pipeline/job_fingerprint.h"

namespace tessera::pipeline {

namespace {

namespace fs = std::filesystem;

bool exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

JobTotals add(const JobTotals& base, const PipelineStats& run) {
  return {base.items + run.items, base.documents + run.documents, base.skipped + run.skipped,
          base.chunks + run.chunks, base.rows + run.rows};
}

}  // namespace

ResumableJob::~ResumableJob() {
  writer_.reset();  // closes the partial files (kept) before the lock goes
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

Status ResumableJob::lock(bool create) {
  const std::string partial = AtomicFile::partial_path(output_);
  lock_fd_ = ::open(partial.c_str(), O_RDWR | (create ? O_CREAT : 0), 0644);
  if (lock_fd_ < 0) {
    return {StatusCode::kNotFound,
            "resume: cannot open " + partial + " (of " + output_ + "): " + std::strerror(errno),
            "resume"};
  }
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const bool busy = errno == EWOULDBLOCK;
    return busy ? Status(StatusCode::kInvalidArgument,
                         "resume: another job is writing " + output_ + " (" + partial +
                             " is locked by a running process)",
                         "resume")
                : internal_error("cannot lock " + partial + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

Status ResumableJob::open(const std::string& output, bool npy, int dim, nlohmann::json job,
                          std::unique_ptr<ResumableJob>* out, const RowEncoding& encoding) {
  std::unique_ptr<ResumableJob> j(new ResumableJob(output, npy));
  j->checkpoint_path_ = checkpoint_path(output);
  if (!exists(j->checkpoint_path_) && !exists(AtomicFile::partial_path(output)) && exists(output)) {
    j->start_ = Start::kNothing;
    *out = std::move(j);
    return Status::Ok();
  }
  bool found = false;
  TESSERA_RETURN_IF_ERROR(load_checkpoint(j->checkpoint_path_, &j->checkpoint_, &found));
  if (!found || !j->checkpoint_.complete) {
    // Read again under the lock, so no other process moves the job on after.
    TESSERA_RETURN_IF_ERROR(j->lock(true));
    TESSERA_RETURN_IF_ERROR(load_checkpoint(j->checkpoint_path_, &j->checkpoint_, &found));
  }
  if (found) {
    const std::string diff = describe_difference(j->checkpoint_.job, job);
    if (!diff.empty()) {
      return {StatusCode::kInvalidArgument,
              "resume: cannot continue " + output + ": the checkpoint " + j->checkpoint_path_ +
                  " is for a different job: " + diff +
                  ". Continue with the same inputs, model and options, or start over without it",
              "resume"};
    }
    j->base_ = j->checkpoint_.done;
    if (j->checkpoint_.complete) {
      TESSERA_RETURN_IF_ERROR(j->publish());
      TESSERA_RETURN_IF_ERROR(remove_checkpoint(j->checkpoint_path_));
      j->start_ = Start::kFinished;
      *out = std::move(j);
      return Status::Ok();
    }
    j->start_ = Start::kContinue;
  } else {
    // Saved before any row is written, so rows never exist without one.
    j->checkpoint_ = Checkpoint{};
    j->checkpoint_.job = std::move(job);
    TESSERA_RETURN_IF_ERROR(save_checkpoint(j->checkpoint_path_, j->checkpoint_));
    j->start_ = Start::kNew;
  }
  WriterOptions options;
  options.resumable = true;
  options.resume_at = j->checkpoint_.output;
  options.encoding = encoding;
  TESSERA_RETURN_IF_ERROR(npy ? make_npy_writer(output, dim, &j->writer_, options)
                              : make_jsonl_writer(output, dim, &j->writer_, options));
  *out = std::move(j);
  return Status::Ok();
}

JobTotals ResumableJob::totals(const PipelineStats& run) const { return add(base_, run); }

Status ResumableJob::skip_committed(DocumentReader& reader) const {
  Document doc;
  Problem problem;
  for (int64_t i = 0; i < base_.items; ++i) {
    if (reader.next(&doc, &problem) == DocumentReader::Item::kEnd) {
      return {StatusCode::kInvalidArgument,
              "resume: cannot continue " + output_ + ": the input ends after " + std::to_string(i) +
                  " documents but " + checkpoint_path_ + " committed " +
                  std::to_string(base_.items) + " (the input changed); start over without it",
              "resume"};
    }
  }
  return Status::Ok();
}

Status ResumableJob::commit(const PipelineStats& run) {
  TESSERA_RETURN_IF_ERROR(writer_->sync(&checkpoint_.output));
  checkpoint_.done = totals(run);
  return save_checkpoint(checkpoint_path_, checkpoint_);
}

Status ResumableJob::finish(const PipelineStats& run) {
  TESSERA_RETURN_IF_ERROR(commit(run));
  checkpoint_.complete = true;
  TESSERA_RETURN_IF_ERROR(save_checkpoint(checkpoint_path_, checkpoint_));
  TESSERA_RETURN_IF_ERROR(writer_->finish());
  TESSERA_RETURN_IF_ERROR(sync_parent_directory(output_));
  return remove_checkpoint(checkpoint_path_);
}

Status ResumableJob::publish() const {
  for (const std::string& file : output_files(output_, npy_)) {
    const std::string partial = AtomicFile::partial_path(file);
    if (!exists(partial)) continue;  // renamed before the previous run died
    if (std::rename(partial.c_str(), file.c_str()) != 0) {
      std::string message = "cannot rename " + partial + " to ";
      message += file;
      message += ": ";
      message += std::strerror(errno);
      return internal_error(message);
    }
  }
  return sync_parent_directory(output_);
}

}  // namespace tessera::pipeline
