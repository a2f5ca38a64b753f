#include "pipeline/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "pipeline/atomic_file.h"
#include "pipeline/temp_files.h"
#include "runtime/json_input.h"
#include "runtime/regular_file.h"

namespace tessera::pipeline {

namespace {

// Names the file's kind and version, so an older or newer tessera refuses a
// layout it does not know instead of misreading it.
constexpr const char* kFormat = "tessera-embed-checkpoint/1";
constexpr int kMaxDepth = 16;

Status field_int(const std::string& path, const nlohmann::json& object, const char* section,
                 const char* key, int64_t* out) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer() || it->get<int64_t>() < 0) {
    return {StatusCode::kInvalidArgument,
            "resume: " + path + ": \"" + section + "." + key +
                "\" is missing or not a non-negative integer: not a checkpoint this tessera "
                "wrote; start over without it",
            "resume"};
  }
  *out = it->get<int64_t>();
  return Status::Ok();
}

nlohmann::json to_json(const Checkpoint& c) {
  return {
      {"format", kFormat},
      {"complete", c.complete},
      {"done",
       {{"items", c.done.items},
        {"documents", c.done.documents},
        {"skipped", c.done.skipped},
        {"chunks", c.done.chunks},
        {"rows", c.done.rows}}},
      {"output",
       {{"rows", c.output.rows}, {"bytes", c.output.bytes}, {"index_bytes", c.output.index_bytes}}},
      {"job", c.job}};
}

Status from_json(const std::string& path, const nlohmann::json& j, Checkpoint* c) {
  auto bad = [&](const std::string& what) {
    return Status(StatusCode::kInvalidArgument,
                  "resume: " + path + ": " + what +
                      ": not a checkpoint this tessera wrote; start over without it",
                  "resume");
  };
  if (!j.is_object()) return bad("not a JSON object");
  const auto format = j.find("format");
  if (format == j.end() || *format != kFormat) {
    return bad("\"format\" is not \"" + std::string(kFormat) + "\"");
  }
  const auto complete = j.find("complete");
  if (complete == j.end() || !complete->is_boolean()) return bad("\"complete\" is not a boolean");
  c->complete = complete->get<bool>();
  const auto done = j.find("done");
  const auto output = j.find("output");
  const auto job = j.find("job");
  if (done == j.end() || !done->is_object()) return bad("\"done\" is not an object");
  if (output == j.end() || !output->is_object()) return bad("\"output\" is not an object");
  if (job == j.end() || !job->is_object()) return bad("\"job\" is not an object");
  TESSERA_RETURN_IF_ERROR(field_int(path, *done, "done", "items", &c->done.items));
  TESSERA_RETURN_IF_ERROR(field_int(path, *done, "done", "documents", &c->done.documents));
  TESSERA_RETURN_IF_ERROR(field_int(path, *done, "done", "skipped", &c->done.skipped));
  TESSERA_RETURN_IF_ERROR(field_int(path, *done, "done", "chunks", &c->done.chunks));
  TESSERA_RETURN_IF_ERROR(field_int(path, *done, "done", "rows", &c->done.rows));
  TESSERA_RETURN_IF_ERROR(field_int(path, *output, "output", "rows", &c->output.rows));
  TESSERA_RETURN_IF_ERROR(field_int(path, *output, "output", "bytes", &c->output.bytes));
  TESSERA_RETURN_IF_ERROR(
      field_int(path, *output, "output", "index_bytes", &c->output.index_bytes));
  if (c->output.rows != c->done.rows) {
    return bad("\"output.rows\" = " + std::to_string(c->output.rows) +
               " but \"done.rows\" = " + std::to_string(c->done.rows));
  }
  c->job = *job;
  return Status::Ok();
}

}  // namespace

std::string checkpoint_path(const std::string& output) { return output + ".checkpoint.json"; }

Status load_checkpoint(const std::string& path, Checkpoint* out, bool* found) {
  std::error_code ec;
  *found = std::filesystem::exists(path, ec);
  if (!*found) return Status::Ok();
  std::string text;
  TESSERA_RETURN_IF_ERROR(read_regular_file(path, json_input::kMaxFileBytes, &text));
  // A checkpoint is 4 levels deep; a deeper file is not one, and copying or
  // printing a hostile nesting would recurse off the stack.
  const auto shallow = [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > kMaxDepth) {
      throw std::length_error("nested deeper than " + std::to_string(kMaxDepth));
    }
    return true;
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text, shallow);
  } catch (const std::exception& e) {
    return {StatusCode::kInvalidArgument,
            "resume: " + path + ": not valid JSON (" + e.what() + "); start over without it",
            "resume"};
  }
  return from_json(path, j, out);
}

Status save_checkpoint(const std::string& path, const Checkpoint& checkpoint) {
  const std::string text = to_json(checkpoint).dump(1) + "\n";
  const std::string temp = path + ".tmp";
  int fd = -1;
  {
    // Registered while it exists (temp_files.h): a SIGTERM mid-save removes it.
    const auto lock = temp_files::hold();
    temp_files::add(temp);
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) temp_files::forget(temp);
  }
  if (fd < 0) return not_found("cannot write " + temp + ": " + std::strerror(errno));

  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  const bool ok = done == text.size() && ::fsync(fd) == 0;
  const std::string why = ok ? "" : std::strerror(errno);
  ::close(fd);
  {
    // Renamed into place or removed: no longer a temporary file either way.
    const auto lock = temp_files::hold();
    temp_files::forget(temp);
    if (!ok) {
      std::remove(temp.c_str());
      return internal_error("writing " + temp + " failed: " + why);
    }
    if (std::rename(temp.c_str(), path.c_str()) != 0) {
      const std::string rename_why = std::strerror(errno);
      std::remove(temp.c_str());
      return internal_error("cannot rename " + temp + " to " + path + ": " + rename_why);
    }
  }
  return sync_parent_directory(path);
}

Status remove_checkpoint(const std::string& path) {
  if (std::remove(path.c_str()) != 0 && errno != ENOENT) {
    return internal_error("cannot remove " + path + ": " + std::strerror(errno));
  }
  return sync_parent_directory(path);
}

}  // namespace tessera::pipeline
