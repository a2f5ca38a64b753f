// `tessera embed --resume` on the command line: what the flag needs, and the
// job's start (new, continued, finished, nothing to do) told on stderr. The
// mechanism is src/pipeline/resumable_job.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pipeline/document_reader.h"
#include "pipeline/job_fingerprint.h"
#include "pipeline/resumable_job.h"
#include "tessera/status.h"

namespace tessera::cli {

// --resume needs an output file to continue and inputs that can be read
// again: not stdout, not stdin.
Status check_resume_flags(const std::string& output, const std::vector<std::string>& inputs);

// Opens the job for `output` and says where it starts; for a continued job,
// moves `reader` past the committed documents. (*job)->start() tells whether
// anything is left to embed (kNew, kContinue).
Status start_resumable_job(const std::string& output, const pipeline::JobDescription& description,
                           int dim, const pipeline::RowEncoding& encoding,
                           pipeline::DocumentReader& reader,
                           std::unique_ptr<pipeline::ResumableJob>* job);

}  // namespace tessera::cli
