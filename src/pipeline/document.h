// Documents as the pipeline sees them, and the problems that make it skip one.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tessera::pipeline {

// (nlohmann::json's noexcept move checks an invariant that clang-tidy 14
// cannot prove non-throwing, hence the NOLINT on the implicit move.)
struct Document {  // NOLINT(bugprone-exception-escape)
  nlohmann::json id;   // a string, or the number a JSONL record gave
  std::string text;    // valid UTF-8 (checked by the reader)
  std::string origin;  // where it came from: "a/b.txt", "docs.jsonl:12", "stdin"
};

// A document (or input) that was reported and skipped; the run goes on.
struct Problem {  // NOLINT(bugprone-exception-escape): as Document
  std::string origin;   // file, "file:line" or "stdin"
  std::string message;  // what is wrong, with the values
  nlohmann::json id;    // the document's id when it was read as one; else null
};

}  // namespace tessera::pipeline
