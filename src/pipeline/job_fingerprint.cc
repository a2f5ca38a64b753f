#include "pipeline/job_fingerprint.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>

namespace tessera::pipeline {

namespace {

namespace fs = std::filesystem;

// Values come from a file a person may have edited: cut them when printing.
constexpr size_t kMaxRendered = 120;
// Up to this many input files are listed one by one (so a difference names
// the file); beyond, a count, a byte total and a digest keep the checkpoint,
// rewritten every round, small (a million files would be ~80 MB).
constexpr size_t kMaxListedInputs = 1000;

// FNV-1a: not cryptographic, only to notice a change between two runs.
constexpr uint64_t kFnvOffset = 14695981039346656037ull;

uint64_t fnv1a(uint64_t h, std::string_view bytes) {
  constexpr uint64_t kPrime = 1099511628211ull;
  for (const char c : bytes) h = (h ^ static_cast<unsigned char>(c)) * kPrime;
  return h;
}

nlohmann::json summarize_inputs(const nlohmann::json& files) {
  uint64_t h = kFnvOffset;
  int64_t bytes = 0;
  for (const nlohmann::json& f : files) {
    h = fnv1a(h, f.dump() + "\n");
    if (f.contains("size")) bytes += f["size"].get<int64_t>();
  }
  char digest[17];
  std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(h));
  return {{"count", files.size()}, {"total_bytes", bytes}, {"digest", digest}};
}

nlohmann::json describe_file(const std::string& path, const std::string& name) {
  nlohmann::json f = {{"path", name}};
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    f["error"] = std::strerror(errno);
    return f;
  }
  f["size"] = static_cast<int64_t>(st.st_size);
  f["mtime_ns"] = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return f;
}

nlohmann::json describe_model_dir(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::error_code file_ec;
    if (it->is_regular_file(file_ec)) {
      names.push_back(fs::relative(it->path(), dir, file_ec).generic_string());
    }
  }
  std::sort(names.begin(), names.end());
  nlohmann::json files = nlohmann::json::array();
  for (const std::string& name : names) {
    std::string path = dir;
    path += '/';
    path += name;
    files.push_back(describe_file(path, name));
  }
  return files;
}

std::string cut(std::string s) {
  if (s.size() > kMaxRendered) s = s.substr(0, kMaxRendered) + "...";
  return s;
}

// Containers are described, not dumped: a value read from the checkpoint may
// be arbitrarily large.
std::string render(const nlohmann::json& v) {
  if (v.is_object() && v.contains("path") && v["path"].is_string()) {
    return "a file entry (" + cut(v["path"].get<std::string>()) + ")";
  }
  if (v.is_object()) return "an object of " + std::to_string(v.size()) + " fields";
  if (v.is_array()) return "an array of " + std::to_string(v.size()) + " entries";
  return cut(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// Arrays of files are named by index and path: "inputs[2] (corpus/b.txt)".
std::string element_name(const std::string& where, size_t i, const nlohmann::json& element) {
  std::string name = where + "[" + std::to_string(i) + "]";
  if (element.is_object() && element.contains("path") && element["path"].is_string()) {
    name += " (" + cut(element["path"].get<std::string>()) + ")";
  }
  return name;
}

// "where.key", or "key" at the top.
std::string field_path(const std::string& where, const std::string& key) {
  if (where.empty()) return key;
  std::string field = where;
  field += '.';
  field += key;
  return field;
}

std::string difference(const std::string& where, const nlohmann::json& old_value,
                       const nlohmann::json& new_value) {
  if (old_value.is_object() && new_value.is_object()) {
    // A file's size says more than its mtime: look at it first.
    std::vector<std::string> keys;
    if (new_value.contains("size")) keys.push_back("size");
    for (const auto& [key, value] : new_value.items()) {
      if (key != "size") keys.push_back(key);
    }
    for (const std::string& key : keys) {
      const nlohmann::json& value = new_value[key];
      const std::string field = field_path(where, key);
      if (!old_value.contains(key)) {
        return field + ": is " + render(value) + ", the checkpoint has none";
      }
      std::string d = difference(field, old_value[key], value);
      if (!d.empty()) return d;
    }
    for (const auto& [key, value] : old_value.items()) {
      if (!new_value.contains(key)) {
        const std::string field = field_path(where, key);
        return field + ": none now, the checkpoint has " + render(value);
      }
    }
    return "";
  }
  if (old_value.is_array() && new_value.is_array()) {
    const size_t n = std::min(old_value.size(), new_value.size());
    for (size_t i = 0; i < n; ++i) {
      std::string d = difference(element_name(where, i, new_value[i]), old_value[i], new_value[i]);
      if (!d.empty()) return d;
    }
    if (old_value.size() != new_value.size()) {
      const auto& longer = old_value.size() > n ? old_value : new_value;
      return where + ": " + std::to_string(new_value.size()) + " entries now, the checkpoint has " +
             std::to_string(old_value.size()) + " (first extra: " + render(longer[n]) + ")";
    }
    return "";
  }
  if (old_value == new_value) return "";
  return where + ": is " + render(new_value) + ", the checkpoint has " + render(old_value);
}

}  // namespace

nlohmann::json job_fingerprint(const JobDescription& job) {
  nlohmann::json inputs = nlohmann::json::array();
  for (const std::string& path : job.inputs) inputs.push_back(describe_file(path, path));
  if (inputs.size() > kMaxListedInputs) inputs = summarize_inputs(inputs);
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(job.model_dir, ec);
  nlohmann::json rows = {{"max_tokens", job.window.max_tokens},
                         {"stride", job.window.stride},
                         {"doc_embedding", job.doc_embedding},
                         {"format", job.npy ? "npy" : "jsonl"}};
  if (!job.prompt.empty()) rows["prompt"] = job.prompt;
  if (job.dimensions > 0) rows["dimensions"] = job.dimensions;
  if (!job.precision.empty() && job.precision != "float32") rows["precision"] = job.precision;
  if (!job.ranges_digest.empty()) rows["quantization_ranges"] = job.ranges_digest;
  return {{"inputs", inputs},
          {"model",
           {{"dir", ec ? job.model_dir : dir.string()},
            {"weights", job.weights},
            {"files", describe_model_dir(job.model_dir)}}},
          {"rows", rows}};
}

std::string content_digest(std::string_view bytes) {
  char digest[17];
  std::snprintf(digest, sizeof digest, "%016llx",
                static_cast<unsigned long long>(fnv1a(kFnvOffset, bytes)));
  return digest;
}

std::string describe_difference(const nlohmann::json& checkpoint, const nlohmann::json& now) {
  return difference("", checkpoint, now);
}

}  // namespace tessera::pipeline
