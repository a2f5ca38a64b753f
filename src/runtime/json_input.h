// The one parse boundary for JSON that tessera did not write (request bodies,
// JSONL documents, model files, tuning tables). Two rules, both because a
// hostile value must never crash the process:
//  - parse() never throws: syntax errors, invalid UTF-8, numbers outside the
//    double range (nlohmann throws out_of_range for `1e400`, not parse_error)
//    and nesting deeper than a limit all become an InvalidArgument Status;
//  - describe() renders a value for an error message bounded in size and in
//    recursion, whatever the value (json::dump() recurses once per level and
//    renders the whole value: a 600 KB body of nested arrays overflowed a
//    connection thread's stack through it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "tessera/status.h"

namespace tessera::json_input {

// serde_json's limit, which TEI answers with: real model files nest < 10 deep.
inline constexpr int kMaxDepth = 128;
// Values shown in error messages are cut to about this many characters.
inline constexpr size_t kDescribeChars = 40;
// Most bytes a JSON file (config.json, tokenizer.json, a tuning table) may
// hold: the largest real tokenizer.json files are tens of MB.
inline constexpr uint64_t kMaxFileBytes = uint64_t{1} << 30;

// Parses `text` into *out. `source` (a path, "body", "file:line") starts every
// error message. Never throws.
Status parse(std::string_view text, std::string_view source, nlohmann::json* out,
             int max_depth = kMaxDepth);

// Reads the whole file at `path` and parses it: NotFound when it does not
// exist, InvalidArgument (naming the path) when it is not a regular file
// (runtime/regular_file.h), holds more than kMaxFileBytes or is not JSON.
Status parse_file(const std::string& path, nlohmann::json* out, int max_depth = kMaxDepth);

// The deepest nesting of arrays and objects in `text`, counted by a linear
// scan that stops as soon as it exceeds `limit` (so it returns at most
// limit + 1). Brackets inside strings do not count.
int nesting_depth(std::string_view text, int limit);

// "array [[1,2],[3,..." : the type name and at most `max_chars` characters of
// ASCII-only JSON text (so cutting never splits a UTF-8 sequence), recursing
// at most a few levels. Never throws.
std::string describe(const nlohmann::json& value, size_t max_chars = kDescribeChars);

// The value's text alone, bounded the same way ("[[1,2],[3,...", "\"yes\"").
std::string render(const nlohmann::json& value, size_t max_chars = kDescribeChars);

// `text` cut to at most `max_chars` bytes (backing off to a UTF-8 sequence
// boundary) with "..." appended when cut: for names and strings taken from
// hostile input (a tensor name, a dtype) shown in messages.
std::string clip(std::string_view text, size_t max_chars = kDescribeChars);

}  // namespace tessera::json_input
