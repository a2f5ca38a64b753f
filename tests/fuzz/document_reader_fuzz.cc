// Fuzz target: the document reader of `tessera embed` on stdin. The first
// byte picks the format (even: JSONL records, odd: one text document); every
// item is read until the end. A document handed out must be valid UTF-8.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

#include "pipeline/document_reader.h"
#include "runtime/utf8.h"
#include "scratch_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using tessera::pipeline::DocumentReader;
  if (size == 0) return 0;
  std::istringstream in(std::string(tessera::fuzz::as_text(data + 1, size - 1)));
  tessera::pipeline::ReaderOptions options;
  options.stdin_format = data[0] % 2 == 0 ? tessera::pipeline::StdinFormat::kJsonl
                                          : tessera::pipeline::StdinFormat::kText;
  options.stdin_stream = &in;
  std::unique_ptr<DocumentReader> reader;
  if (!DocumentReader::open({"-"}, options, &reader).ok()) std::abort();  // stdin always opens
  tessera::pipeline::Document doc;
  tessera::pipeline::Problem problem;
  for (size_t items = 0;; ++items) {
    const DocumentReader::Item item = reader->next(&doc, &problem);
    if (item == DocumentReader::Item::kEnd) break;
    if (item == DocumentReader::Item::kDocument &&
        !tessera::describe_invalid_utf8(doc.text).empty()) {
      std::abort();
    }
    if (items > size + 1) std::abort();  // each item consumes input: no endless loop
  }
  return 0;
}
