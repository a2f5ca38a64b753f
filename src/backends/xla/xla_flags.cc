#include "xla/xla_flags.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <functional>
#include <vector>

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
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return not_found("cannot open PJRT plugin " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
    ::close(fd);
    return invalid_argument("PJRT plugin " + path + " is empty or unreadable");
  }
  void* map = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return internal_error("cannot map PJRT plugin " + path);
  Status result = found(std::string_view(static_cast<const char*>(map), st.st_size));
  ::munmap(map, static_cast<size_t>(st.st_size));
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
