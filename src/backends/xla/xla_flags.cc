#include "xla/xla_flags.h"

#include <sys/mman.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <vector>

#include "runtime/regular_file.h"

namespace tessera::xla {

namespace {

std::vector<std::string_view> split_whitespace(std::string_view text) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t j = i;
    while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
    if (j > i) words.push_back(text.substr(i, j - i));
    i = j;
  }
  return words;
}

bool is_flag_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// Calls `found` with the plugin file's bytes (read-only mapping).
Status with_file_bytes(const std::string& path,
                       const std::function<Status(std::string_view)>& found) {
  UniqueFd fd;
  uint64_t size = 0;
  if (Status s = open_regular_file(path, &fd, &size); !s.ok()) {
    return Status(s.code(), "PJRT plugin " + path + ": " + s.message());
  }
  if (size == 0) return invalid_argument("PJRT plugin " + path + " is empty");
  void* map = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (map == MAP_FAILED) return internal_error("cannot map PJRT plugin " + path);
  Status result = found(std::string_view(static_cast<const char*>(map), size));
  ::munmap(map, static_cast<size_t>(size));
  return result;
}

}  // namespace

Status check_xla_flags(std::string_view flags, const std::string& plugin_path) {
  const std::vector<std::string_view> entries = split_whitespace(flags);
  if (entries.empty()) return Status::Ok();
  std::vector<std::string_view> names;
  for (std::string_view entry : entries) {
    std::string_view name = entry;
    if (name.substr(0, 2) == "--") name.remove_prefix(2);
    name = name.substr(0, name.find('='));
    if (entry.substr(0, 2) != "--" || !is_flag_name(name)) {
      return invalid_argument("XLA_FLAGS entry '" + std::string(entry) +
                              "' is not of the form --name[=value]; XLA would abort the process "
                              "on it, so the xla backend refuses to start: fix or unset XLA_FLAGS");
    }
    names.push_back(name);
  }
  return with_file_bytes(plugin_path, [&](std::string_view bytes) -> Status {
    for (size_t i = 0; i < names.size(); ++i) {
      // Flag names are string literals in the plugin; a name it lacks is one
      // XLA would reject fatally.
      if (std::search(bytes.begin(), bytes.end(),
                      std::boyer_moore_horspool_searcher(names[i].begin(), names[i].end())) ==
          bytes.end()) {
        return invalid_argument("XLA_FLAGS entry '" + std::string(entries[i]) +
                                "' names a flag the PJRT plugin " + plugin_path +
                                " does not know; XLA would abort the process on it, so the xla "
                                "backend refuses to start: fix or unset XLA_FLAGS");
      }
    }
    return Status::Ok();
  });
}

}  // namespace tessera::xla
