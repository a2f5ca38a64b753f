// NVTX ranges mirror the profiler's spans (CUDA builds only). No GPU and no
// Nsight are needed: nvtx_span_driver runs as a child process with
// NVTX_INJECTION64_PATH naming nvtx_recorder.cc, the test-only NVTX tool that
// NVTX3 loads exactly as it loads Nsight's; the tool writes every range push
// and pop it receives, and the test compares them with the driver's spans.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace tessera {
namespace {

namespace fs = std::filesystem;

constexpr char kDriver[] = TESSERA_NVTX_DRIVER;
constexpr char kRecorder[] = TESSERA_NVTX_RECORDER;

// The driver's ranges per thread, as "push NAME" / "pop" in order.
const std::vector<std::string> kMainThread = {"push driver.outer",
                                              "push driver.inner",
                                              "pop",
                                              "push driver.sibling",
                                              "push attention test.served",
                                              "pop",
                                              "push attention.shadow reference",
                                              "pop",
                                              "pop",
                                              "pop"};
const std::vector<std::string> kWorkerThread = {"push driver.worker", "push driver.worker.inner",
                                                "pop", "pop"};

// Span or range names by thread, each list sorted; the lists sorted too, so
// two processes' thread numbers need not agree.
using NamesByThread = std::vector<std::vector<std::string>>;

NamesByThread sorted(std::map<std::string, std::vector<std::string>> by_thread) {
  NamesByThread out;
  for (auto& entry : by_thread) {
    std::vector<std::string>& names = entry.second;
    std::sort(names.begin(), names.end());
    out.push_back(std::move(names));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The names of the "push NAME" entries of `events`, in order.
std::vector<std::string> pushed_names(const std::vector<std::string>& events) {
  std::vector<std::string> out;
  for (const std::string& e : events) {
    if (e.starts_with("push ")) out.push_back(e.substr(5));
  }
  return out;
}

// What the profiler should record: one span per range of both sequences.
NamesByThread expected_span_names() {
  return sorted({{"main", pushed_names(kMainThread)}, {"worker", pushed_names(kWorkerThread)}});
}

// "thread <TAB> name" lines from the driver.
NamesByThread read_spans(const fs::path& path) {
  std::map<std::string, std::vector<std::string>> by_thread;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const size_t tab = line.find('\t');
    by_thread[line.substr(0, tab)].push_back(line.substr(tab + 1));
  }
  return sorted(std::move(by_thread));
}

struct Recorded {
  std::map<std::string, std::vector<std::string>> events_by_thread;  // in order
  std::vector<std::string> domains;                                  // of every event
};

// nvtx_recorder.cc's lines: push/pop <TAB> tid <TAB> domain [<TAB> name].
Recorded read_events(const fs::path& path) {
  Recorded r;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, '\t');) fields.push_back(f);
    if (fields.size() < 3) {
      ADD_FAILURE() << "bad recorder line: " << line;
      continue;
    }
    r.domains.push_back(fields[2]);
    r.events_by_thread[fields[1]].push_back(
        fields[0] == "push" && fields.size() == 4 ? "push " + fields[3] : fields[0]);
  }
  return r;
}

class NvtxRanges : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "tessera-nvtx-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the driver with only `env` (plus PATH) in its environment; returns
  // its exit code, or 128 + the signal that ended it.
  int run_driver(std::vector<std::string> env) const {
    env.push_back("PATH=/usr/bin:/bin");
    std::vector<std::string> args = {kDriver, spans_file().string()};
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    if (::posix_spawn(&pid, kDriver, nullptr, nullptr, argv.data(), envp.data()) != 0) return -1;
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  fs::path spans_file() const { return dir_ / "spans.tsv"; }
  fs::path events_file() const { return dir_ / "nvtx.tsv"; }
  std::string record_env() const { return "TESSERA_NVTX_RECORD=" + events_file().string(); }

  fs::path dir_;
};

TEST_F(NvtxRanges, MirrorTheSpansWithTheSameNamesOrderAndNesting) {
  ASSERT_EQ(run_driver({std::string("NVTX_INJECTION64_PATH=") + kRecorder, record_env()}), 0);
  ASSERT_TRUE(fs::exists(events_file())) << "NVTX did not load " << kRecorder;
  const Recorded r = read_events(events_file());
  for (const std::string& d : r.domains) EXPECT_EQ(d, "tessera");

  // One stack of ranges per thread, as each thread opened its spans; no
  // range for the spans opened while the profiler was disabled.
  ASSERT_EQ(r.events_by_thread.size(), 2u);
  std::vector<std::vector<std::string>> sequences;
  for (const auto& [tid, events] : r.events_by_thread) sequences.push_back(events);
  if (sequences[0] != kMainThread) std::swap(sequences[0], sequences[1]);
  EXPECT_EQ(sequences[0], kMainThread);
  EXPECT_EQ(sequences[1], kWorkerThread);

  // The profiler recorded spans of exactly those names, on the same threads.
  std::map<std::string, std::vector<std::string>> pushed;
  for (const auto& [tid, events] : r.events_by_thread) pushed[tid] = pushed_names(events);
  EXPECT_EQ(read_spans(spans_file()), sorted(std::move(pushed)));
}

TEST_F(NvtxRanges, WithoutAToolSpansAreRecordedAsBefore) {
  ASSERT_EQ(run_driver({record_env()}), 0);
  EXPECT_FALSE(fs::exists(events_file()));  // no tool was loaded
  EXPECT_EQ(read_spans(spans_file()), expected_span_names());
}

TEST_F(NvtxRanges, AToolThatDeclinesToAttachChangesNothing) {
  // The recorder declines (returns 0) without TESSERA_NVTX_RECORD; NVTX then
  // turns every call into a no-op.
  ASSERT_EQ(run_driver({std::string("NVTX_INJECTION64_PATH=") + kRecorder}), 0);
  EXPECT_EQ(read_spans(spans_file()), expected_span_names());
}

}  // namespace
}  // namespace tessera
