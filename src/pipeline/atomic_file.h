// AtomicFile: a file that appears at its path only when complete. Writes go to
// a work file beside the target, and commit() renames it into place.
//   open(path)            work file "<path>.tmp-<pid>", removed if the object
//                         dies uncommitted: a fatal error leaves nothing;
//                         registered in temp_files.h, so SIGTERM or SIGINT
//                         in `tessera embed` leaves nothing either.
//   open_resumable(path)  work file "<path>.partial", a stable name that
//                         outlives a crash (tessera embed --resume): sync()
//                         makes what was written durable, and a later process
//                         reopens it at the length a checkpoint recorded.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "tessera/status.h"

namespace tessera::pipeline {

class AtomicFile {
 public:
  AtomicFile() = default;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  Status open(const std::string& path);
  // keep_bytes 0 starts "<path>.partial" empty; > 0 continues it after cutting
  // it to keep_bytes (whatever follows is a torn tail from a crash). A partial
  // file shorter than keep_bytes is an error naming both lengths.
  Status open_resumable(const std::string& path, int64_t keep_bytes);
  static std::string partial_path(const std::string& path) { return path + ".partial"; }

  Status write(std::string_view bytes);
  // Overwrites bytes at `offset` (a header) and goes back to the end.
  Status write_at(int64_t offset, std::string_view bytes);
  // Flushes and fsyncs: everything written so far survives a crash. *bytes
  // receives the file's length.
  Status sync(int64_t* bytes);
  // Flushes, closes and renames (resumable files are fsynced first); an error
  // (disk full...) names the path.
  Status commit();
  const std::string& path() const { return path_; }
  const std::string& work_path() const { return temp_path_; }

 private:
  void discard();
  void remove_temp();  // not for resumable files, which are kept

  std::string path_;
  std::string temp_path_;
  FILE* file_ = nullptr;
  bool resumable_ = false;  // keep the work file when dying uncommitted
};

// fsyncs the directory holding `path`, so a rename or a new file in it
// survives a crash of the machine, not only of the process.
Status sync_parent_directory(const std::string& path);

}  // namespace tessera::pipeline
