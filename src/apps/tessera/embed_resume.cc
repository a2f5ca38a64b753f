#include "embed_resume.h"

#include <cstdio>

#include "pipeline/atomic_file.h"
#include "pipeline/checkpoint.h"

namespace tessera::cli {

namespace {

long long ll(int64_t v) { return static_cast<long long>(v); }

}  // namespace

Status check_resume_flags(const std::string& output, const std::vector<std::string>& inputs) {
  if (output.empty() || output == "-") {
    return invalid_argument("--resume needs an output file (-o FILE): stdout cannot be continued");
  }
  for (const std::string& input : inputs) {
    if (input == "-") {
      return invalid_argument(
          "--resume cannot continue stdin ('-'): what was read is gone when the process dies; "
          "save the input to a file and embed that");
    }
  }
  return Status::Ok();
}

Status start_resumable_job(const std::string& output, const pipeline::JobDescription& description,
                           int dim, const pipeline::RowEncoding& encoding,
                           pipeline::DocumentReader& reader,
                           std::unique_ptr<pipeline::ResumableJob>* job) {
  using Start = pipeline::ResumableJob::Start;
  TESSERA_RETURN_IF_ERROR(pipeline::ResumableJob::open(
      output, description.npy, dim, pipeline::job_fingerprint(description), job, encoding));
  const std::string checkpoint = pipeline::checkpoint_path(output);
  const pipeline::JobTotals& done = (*job)->committed();
  switch ((*job)->start()) {
    case Start::kNothing:
      std::fprintf(stderr,
                   "tessera: nothing to resume: %s exists and has no checkpoint %s (the job "
                   "finished, or ran without --resume). Remove it to embed again, or run "
                   "without --resume to overwrite it\n",
                   output.c_str(), checkpoint.c_str());
      break;
    case Start::kFinished:
      std::fprintf(stderr,
                   "tessera: %s: the job had already embedded everything (%lld documents, %lld "
                   "skipped, %lld rows); its output is now in place\n",
                   output.c_str(), ll(done.documents), ll(done.skipped), ll(done.rows));
      break;
    case Start::kContinue:
      TESSERA_RETURN_IF_ERROR((*job)->skip_committed(reader));
      std::fprintf(stderr,
                   "tessera: resuming %s from %s: skipped %lld input documents already done "
                   "(%lld rows written, %lld documents skipped as bad)\n",
                   output.c_str(), checkpoint.c_str(), ll(done.items), ll(done.rows),
                   ll(done.skipped));
      break;
    case Start::kNew:
      std::fprintf(stderr, "tessera: resumable job: rows go to %s, committed every round to %s\n",
                   pipeline::AtomicFile::partial_path(output).c_str(), checkpoint.c_str());
      break;
  }
  return Status::Ok();
}

}  // namespace tessera::cli
