#include "pipeline/document_reader.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "runtime/bounded_read.h"
#include "runtime/json_input.h"
#include "runtime/regular_file.h"
#include "runtime/utf8.h"

namespace tessera::pipeline {

namespace fs = std::filesystem;

namespace {

constexpr const char* kStdinName = "stdin";

bool has_extension(const fs::path& p, const char* ext) { return p.extension() == ext; }

bool is_document_file(const fs::path& p) {
  return has_extension(p, ".txt") || has_extension(p, ".md") || has_extension(p, ".jsonl");
}

bool is_blank(const std::string& line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; });
}

}  // namespace

Status DocumentReader::open(const std::vector<std::string>& inputs, const ReaderOptions& options,
                            std::unique_ptr<DocumentReader>* out) {
  if (inputs.empty()) return invalid_argument("no inputs: give files, directories or '-'");
  std::unique_ptr<DocumentReader> r(new DocumentReader());
  r->options_ = options;
  if (r->options_.stdin_stream == nullptr) r->options_.stdin_stream = &std::cin;
  for (const std::string& input : inputs) {
    if (input == "-") {
      r->inputs_.push_back({"-", options.stdin_format == StdinFormat::kJsonl});
      continue;
    }
    std::error_code ec;
    // A path that is not there is a typo in the command, not a bad document:
    // refused before any work (the CLI's exit 2, nothing written).
    if (!fs::exists(input, ec) && !ec) {
      return not_found(input +
                       ": no such file or directory (inputs are files, directories or "
                       "'-' for stdin)");
    }
    if (!fs::is_directory(input, ec)) {
      r->inputs_.push_back({input, has_extension(input, ".jsonl")});
      const auto size = fs::file_size(input, ec);
      if (!ec) r->bytes_total_ += size;
      continue;
    }
    std::vector<std::string> files;
    fs::recursive_directory_iterator it(input, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      std::error_code file_ec;
      if (it->is_regular_file(file_ec) && is_document_file(it->path())) {
        files.push_back(it->path().generic_string());
        const auto size = it->file_size(file_ec);
        if (!file_ec) r->bytes_total_ += size;
      }
    }
    if (ec) {
      r->pending_.push_back({input, "cannot list directory: " + ec.message()});
    } else if (files.empty()) {
      r->pending_.push_back({input, "directory has no .txt, .md or .jsonl files"});
    }
    std::sort(files.begin(), files.end());
    for (auto& f : files) r->inputs_.push_back({f, has_extension(f, ".jsonl")});
  }
  *out = std::move(r);
  return Status::Ok();
}

std::vector<std::string> DocumentReader::input_paths() const {
  std::vector<std::string> paths;
  paths.reserve(inputs_.size());
  for (const Input& input : inputs_) paths.push_back(input.path);
  return paths;
}

std::unique_ptr<DocumentReader> DocumentReader::from_texts(std::vector<std::string> texts) {
  std::unique_ptr<DocumentReader> r(new DocumentReader());
  for (const std::string& t : texts) r->bytes_total_ += t.size();
  r->texts_ = std::move(texts);
  return r;
}

DocumentReader::Item DocumentReader::next(Document* doc, Problem* problem) {
  if (next_text_ < texts_.size()) {
    const size_t i = next_text_++;
    doc->id = static_cast<int64_t>(i);
    doc->text = std::move(texts_[i]);
    doc->origin = "documents[" + std::to_string(i) + "]";
    bytes_read_ += doc->text.size();
    return Item::kDocument;
  }
  while (true) {
    if (!pending_.empty()) {
      *problem = std::move(pending_.front());
      pending_.erase(pending_.begin());
      return Item::kProblem;
    }
    if (jsonl_stream_ != nullptr) {
      const Item item = next_jsonl(doc, problem);
      if (item != Item::kEnd) return item;
      jsonl_stream_ = nullptr;
      jsonl_file_.reset();
      jsonl_buffer_.reset();
      continue;
    }
    if (next_input_ == inputs_.size()) return Item::kEnd;
    const Input& input = inputs_[next_input_++];
    if (!input.jsonl) return read_whole(input, doc, problem);
    if (!open_jsonl(input, problem)) return Item::kProblem;
  }
}

std::string DocumentReader::over_limit() const {
  return "over the limit of " + std::to_string(options_.max_document_bytes) + " bytes per document";
}

bool DocumentReader::read_text(const Input& input, const std::string& origin, std::string* text,
                               Problem* problem) {
  const uint64_t max = options_.max_document_bytes;
  if (input.path == "-") {
    bool truncated = false;
    read_all_bounded(*options_.stdin_stream, max, text, &truncated);
    bytes_read_ += text->size();
    if (options_.stdin_stream->bad()) {
      *problem = {origin, "read failed"};
      return false;
    }
    if (truncated) {
      // The rest is not read: stdin may never end (/dev/zero).
      *problem = {origin, "is " + over_limit() + " (the rest of stdin is not read)"};
      text->clear();
      return false;
    }
    return true;
  }
  if (Status s = read_file_within(input.path, max, text); !s.ok()) {
    // Skipped, the file is done with all the same (the progress bar's total
    // counts its size).
    std::error_code ec;
    const uint64_t size = fs::file_size(input.path, ec);
    if (!ec) bytes_read_ += size;
    *problem = {origin, s.message()};
    return false;
  }
  bytes_read_ += text->size();
  return true;
}

DocumentReader::Item DocumentReader::read_whole(const Input& input, Document* doc,
                                                Problem* problem) {
  const std::string origin = input.path == "-" ? kStdinName : input.path;
  std::string text;
  if (!read_text(input, origin, &text, problem)) return Item::kProblem;
  if (std::string bad = describe_invalid_utf8(text); !bad.empty()) {
    *problem = {origin, std::move(bad)};
    return Item::kProblem;
  }
  doc->id = origin;
  doc->text = std::move(text);
  doc->origin = origin;
  return Item::kDocument;
}

bool DocumentReader::open_jsonl(const Input& input, Problem* problem) {
  jsonl_line_ = 0;
  if (input.path == "-") {
    jsonl_path_ = kStdinName;
    jsonl_stream_ = options_.stdin_stream;
    return true;
  }
  jsonl_path_ = input.path;
  UniqueFd fd;
  uint64_t size = 0;
  if (Status s = open_regular_file(input.path, &fd, &size); !s.ok()) {
    *problem = {input.path, s.message()};
    return false;
  }
  jsonl_buffer_ = std::make_unique<FdStreambuf>(std::move(fd));
  jsonl_file_ = std::make_unique<std::istream>(jsonl_buffer_.get());
  jsonl_stream_ = jsonl_file_.get();
  return true;
}

DocumentReader::Item DocumentReader::next_jsonl(Document* doc, Problem* problem) {
  std::string line;
  uint64_t consumed = 0;
  LineRead read = LineRead::kEnd;
  while ((read = read_line_bounded(*jsonl_stream_, options_.max_document_bytes, &line,
                                   &consumed)) != LineRead::kEnd) {
    ++jsonl_line_;
    bytes_read_ += consumed;
    const std::string origin = jsonl_path_ + ":" + std::to_string(jsonl_line_);
    if (read == LineRead::kTooLong) {
      *problem = {origin, "the line is " + over_limit()};
      return Item::kProblem;
    }
    if (is_blank(line)) continue;
    nlohmann::json record;
    // Every JSON failure (syntax, 1e400, nesting) is this line's problem; the
    // job goes on with the next line.
    if (Status s = json_input::parse(line, "malformed JSON", &record); !s.ok()) {
      *problem = {origin, s.message()};
      return Item::kProblem;
    }
    if (!record.is_object()) {
      *problem = {origin, std::string("expected a JSON object {\"id\": ..., \"text\": ...}, got ") +
                              record.type_name()};
      return Item::kProblem;
    }
    const auto text = record.find("text");
    if (text == record.end()) {
      *problem = {origin, "missing \"text\""};
      return Item::kProblem;
    }
    if (!text->is_string()) {
      *problem = {origin, std::string("\"text\" must be a string, got ") + text->type_name()};
      return Item::kProblem;
    }
    const auto id = record.find("id");
    if (id != record.end() && !id->is_string() && !id->is_number()) {
      *problem = {origin,
                  std::string("\"id\" must be a string or a number, got ") + id->type_name()};
      return Item::kProblem;
    }
    doc->text = text->get<std::string>();
    if (std::string bad = describe_invalid_utf8(doc->text); !bad.empty()) {
      *problem = {origin, "\"text\" is " + bad};
      return Item::kProblem;
    }
    doc->id = id != record.end() ? *id : nlohmann::json(origin);
    doc->origin = origin;
    return Item::kDocument;
  }
  if (jsonl_stream_->bad() || (jsonl_buffer_ != nullptr && jsonl_buffer_->error() != 0)) {
    *problem = {jsonl_path_, "read failed after line " + std::to_string(jsonl_line_)};
    jsonl_stream_ = nullptr;
    jsonl_file_.reset();
    jsonl_buffer_.reset();
    return Item::kProblem;
  }
  return Item::kEnd;
}

}  // namespace tessera::pipeline
