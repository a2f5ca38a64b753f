// DocumentReader: streams documents from the command line's inputs, one at a
// time, so memory stays bounded however large the corpus.
//   file.jsonl          one document per line: {"id": "..." or 12, "text": "..."}
//   file (other names)  the whole file is one document; id = the path
//   directory           recursively, in sorted path order: *.txt and *.md (one
//                       document each) and *.jsonl (records)
//   "-"                 stdin: one text document (id "stdin"), or JSONL records
// A bad document (unreadable file, invalid UTF-8, malformed JSONL line, missing
// "text", more than max_document_bytes) is returned as a Problem naming the
// file / line; reading goes on. Input files are read only when they are
// regular files (a FIFO or a device such as /dev/zero is a problem, refused
// before it is read), and no document or line is held past the size limit,
// whatever stdin or a file holds.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/document.h"
#include "runtime/fd_streambuf.h"
#include "tessera/status.h"

namespace tessera::pipeline {

enum class StdinFormat { kText, kJsonl };

// Bytes one document (a file, stdin, a JSONL line) may have by default.
inline constexpr uint64_t kDefaultMaxDocumentBytes = uint64_t{64} << 20;

struct ReaderOptions {
  StdinFormat stdin_format = StdinFormat::kText;
  uint64_t max_document_bytes = kDefaultMaxDocumentBytes;
  std::istream* stdin_stream = nullptr;  // tests substitute; default std::cin
};

class DocumentReader {
 public:
  enum class Item { kDocument, kProblem, kEnd };

  // Expands directories now (so a progress bar knows the total bytes). Inputs
  // that do not exist become problems when reached, not errors here.
  static Status open(const std::vector<std::string>& inputs, const ReaderOptions& options,
                     std::unique_ptr<DocumentReader>* out);

  // Documents already in memory (the Embedder API, the server's documents
  // route), served in order with ids 0, 1, ... and origins "documents[i]".
  static std::unique_ptr<DocumentReader> from_texts(std::vector<std::string> texts);

  // Fills *doc or *problem and says which; kEnd when every input is read.
  Item next(Document* doc, Problem* problem);

  // Bytes in the input files (0 when unknown: stdin) and bytes consumed.
  uint64_t bytes_total() const { return bytes_total_; }
  uint64_t bytes_read() const { return bytes_read_; }
  // The input files in reading order, directories expanded; "-" is stdin.
  std::vector<std::string> input_paths() const;

 private:
  struct Input {
    std::string path;  // "-" for stdin
    bool jsonl = false;
  };
  DocumentReader() = default;
  Item next_jsonl(Document* doc, Problem* problem);
  Item read_whole(const Input& input, Document* doc, Problem* problem);
  // Reads a file or stdin whole into *text, or says why not in *problem.
  bool read_text(const Input& input, const std::string& origin, std::string* text,
                 Problem* problem);
  std::string over_limit() const;  // "over the limit of N bytes per document"
  bool open_jsonl(const Input& input, Problem* problem);

  ReaderOptions options_;
  std::vector<Input> inputs_;
  std::vector<Problem> pending_;    // found while expanding directories
  std::vector<std::string> texts_;  // from_texts: served before any input
  size_t next_text_ = 0;
  size_t next_input_ = 0;
  // The JSONL input being read, if any.
  std::string jsonl_path_;
  std::unique_ptr<FdStreambuf> jsonl_buffer_;
  std::unique_ptr<std::istream> jsonl_file_;
  std::istream* jsonl_stream_ = nullptr;
  int64_t jsonl_line_ = 0;
  uint64_t bytes_total_ = 0;
  uint64_t bytes_read_ = 0;
};

}  // namespace tessera::pipeline
