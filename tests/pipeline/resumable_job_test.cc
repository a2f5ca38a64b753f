// `tessera embed --resume` below the CLI: the partial files, the checkpoint,
// the fingerprint, and a job stopped after some rounds (with a torn tail
// added, as a kill in the middle of a round leaves) and continued, which must
// give the same bytes as a run that was never stopped.
#include "pipeline/resumable_job.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "pipeline/atomic_file.h"
#include "pipeline/checkpoint.h"
#include "pipeline/job_fingerprint.h"
#include "support/fake_model.h"
#include "temp_dir.h"

namespace tessera::pipeline {
namespace {

namespace fs = std::filesystem;
using tessera::testing::FakeModel;
using testing::TempDir;

constexpr int kDim = 8;

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void append(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::app) << bytes;
}

TEST(AtomicFileResumable, KeepsThePartialFileAndCutsATornTail) {
  TempDir dir;
  const std::string path = dir.path() + "/out.jsonl";
  int64_t bytes = 0;
  {
    AtomicFile f;
    ASSERT_TRUE(f.open_resumable(path, 0).ok());
    ASSERT_TRUE(f.write("row 1\n").ok());
    ASSERT_TRUE(f.sync(&bytes).ok());
    ASSERT_TRUE(f.write("row 2 (never synced)\n").ok());
  }  // dies uncommitted: the partial file stays
  EXPECT_EQ(bytes, 6);
  EXPECT_FALSE(fs::exists(path));
  ASSERT_TRUE(fs::exists(path + ".partial"));
  append(path + ".partial", "torn ro");
  {
    AtomicFile f;
    ASSERT_TRUE(f.open_resumable(path, bytes).ok());
    ASSERT_TRUE(f.write("row 2\n").ok());
    ASSERT_TRUE(f.commit().ok());
  }
  EXPECT_EQ(slurp(path), "row 1\nrow 2\n");
  EXPECT_FALSE(fs::exists(path + ".partial"));
}

TEST(AtomicFileResumable, APartialFileShorterThanTheCheckpointIsAnError) {
  TempDir dir;
  const std::string path = dir.path() + "/out.jsonl";
  dir.write("out.jsonl.partial", "abc");
  AtomicFile f;
  const Status s = f.open_resumable(path, 10);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("out.jsonl.partial has 3 bytes but the checkpoint recorded 10"),
            std::string::npos)
      << s.message();
}

TEST(Checkpoint, RoundTripsAndNamesTheBadField) {
  TempDir dir;
  const std::string path = dir.path() + "/out.jsonl.checkpoint.json";
  bool found = true;
  Checkpoint c;
  ASSERT_TRUE(load_checkpoint(path, &c, &found).ok());
  EXPECT_FALSE(found);
  c.job = {{"inputs", {"a.txt"}}};
  c.done = {5, 4, 1, 9, 9};
  c.output = {9, 1234, 0};
  ASSERT_TRUE(save_checkpoint(path, c).ok());
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  Checkpoint back;
  ASSERT_TRUE(load_checkpoint(path, &back, &found).ok());
  ASSERT_TRUE(found);
  EXPECT_EQ(back.job, c.job);
  EXPECT_EQ(back.done.items, 5);
  EXPECT_EQ(back.done.skipped, 1);
  EXPECT_EQ(back.output.bytes, 1234);
  EXPECT_FALSE(back.complete);

  std::string text = slurp(path);
  text.replace(text.find("1234"), 4, "-1");
  dir.write("out.jsonl.checkpoint.json", text);
  Status s = load_checkpoint(path, &back, &found);
  EXPECT_NE(s.message().find("\"output.bytes\" is missing or not a non-negative integer"),
            std::string::npos)
      << s.message();
  // Deep nesting is refused while parsing, before anything copies or prints it.
  dir.write("out.jsonl.checkpoint.json",
            "{\"job\": " + std::string(200000, '[') + std::string(200000, ']') + "}");
  s = load_checkpoint(path, &back, &found);
  EXPECT_NE(s.message().find("nested deeper than 16"), std::string::npos) << s.message();
  dir.write("out.jsonl.checkpoint.json", "{\"done\": 1e400");
  s = load_checkpoint(path, &back, &found);
  EXPECT_NE(s.message().find("not valid JSON"), std::string::npos) << s.message();
}

TEST(JobFingerprint, TheDifferenceNamesTheFileAndBothValues) {
  TempDir dir;
  const std::string a = dir.write("a.txt", "alpha");
  const std::string b = dir.write("b.txt", "beta");
  fs::create_directories(dir.path() + "/model");
  JobDescription job{{a, b}, dir.path() + "/model", "f32", {16, 4}, false, false};
  const nlohmann::json before = job_fingerprint(job);
  EXPECT_EQ(describe_difference(before, job_fingerprint(job)), "");
  append(b, " and more");
  const nlohmann::json after = job_fingerprint(job);
  EXPECT_EQ(describe_difference(before, after),
            "inputs[1] (" + b + ").size: is 13, the checkpoint has 4");
  job.inputs.push_back(a);
  EXPECT_NE(describe_difference(after, job_fingerprint(job))
                .find("inputs: 3 entries now, the "
                      "checkpoint has 2"),
            std::string::npos);
  job.inputs.pop_back();
  job.window.stride = 5;
  EXPECT_EQ(describe_difference(after, job_fingerprint(job)),
            "rows.stride: is 5, the checkpoint has 4");
}

TEST(JobFingerprint, RowOptionsAreInOnlyWhenSet) {
  TempDir dir;
  fs::create_directories(dir.path() + "/model");
  JobDescription job{
      {dir.write("a.txt", "alpha")}, dir.path() + "/model", "f32", {16, 4}, false, false};
  const nlohmann::json plain = job_fingerprint(job);
  // A checkpoint from before these options existed still matches a plain job.
  for (const char* key : {"prompt", "dimensions", "precision", "quantization_ranges"}) {
    EXPECT_FALSE(plain["rows"].contains(key)) << key;
  }
  job.precision = "float32";
  EXPECT_EQ(describe_difference(plain, job_fingerprint(job)), "");
  job.dimensions = 128;
  EXPECT_EQ(describe_difference(plain, job_fingerprint(job)),
            "rows.dimensions: is 128, the checkpoint has none");
  const nlohmann::json with_128 = job_fingerprint(job);
  job.dimensions = 64;
  EXPECT_EQ(describe_difference(with_128, job_fingerprint(job)),
            "rows.dimensions: is 64, the checkpoint has 128");
  job.dimensions = 0;
  job.prompt = "query: ";
  EXPECT_EQ(describe_difference(plain, job_fingerprint(job)),
            "rows.prompt: is \"query: \", the checkpoint has none");
  job.prompt.clear();
  job.precision = "int8";
  job.ranges_digest = content_digest("ranges one");
  const nlohmann::json int8 = job_fingerprint(job);
  EXPECT_EQ(int8["rows"]["precision"], "int8");
  EXPECT_EQ(content_digest("ranges one").size(), 16u);
  job.ranges_digest = content_digest("ranges two");
  EXPECT_EQ(describe_difference(int8, job_fingerprint(job)).substr(0, 26),
            "rows.quantization_ranges: ");
  EXPECT_EQ(describe_difference(int8, plain),
            "rows.precision: none now, the checkpoint has \"int8\"");
}

TEST(JobFingerprint, ManyInputsAreSummarizedSoTheCheckpointStaysSmall) {
  TempDir dir;
  JobDescription job;
  job.model_dir = dir.path() + "/model";
  fs::create_directories(job.model_dir);
  for (int i = 0; i < 1001; ++i) {
    job.inputs.push_back(dir.write("in/" + std::to_string(i) + ".txt", "x"));
  }
  const nlohmann::json before = job_fingerprint(job);
  ASSERT_TRUE(before["inputs"].is_object());
  EXPECT_EQ(before["inputs"]["count"], 1001);
  EXPECT_EQ(before["inputs"]["total_bytes"], 1001);
  EXPECT_LT(before.dump().size(), 2000u);
  append(job.inputs[500], "y");
  EXPECT_EQ(describe_difference(before, job_fingerprint(job)).substr(0, 14), "inputs.digest:");
}

// One run of a resumable job over `input`; stop_after_rounds >= 0 makes the
// round callback fail after committing that many rounds, as a process that
// dies there (the partial files and the checkpoint stay); finish false stops
// after the last round, before finish().
struct JobRun {
  Status status;
  ResumableJob::Start start = ResumableJob::Start::kNew;
  PipelineStats stats;
  JobTotals totals;
};

class ResumableJobTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    npy_ = GetParam();
    std::string jsonl;
    for (int d = 0; d < 40; ++d) {
      std::string text;
      for (int w = 0; w < 3 + (d * 7919) % 37; ++w) {
        text += "d" + std::to_string(d) + "w" + std::to_string(w) + " ";
      }
      if (d == 17) text = "   ";  // a document with no tokens: reported and skipped
      jsonl += nlohmann::json{{"id", d}, {"text", text}}.dump() + "\n";
    }
    input_ = dir_.write("docs.jsonl", jsonl);
    fs::create_directories(dir_.path() + "/model");
  }

  std::string output(const std::string& name) const {
    return dir_.path() + "/" + name + (npy_ ? ".npy" : ".jsonl");
  }

  nlohmann::json fingerprint() const {
    return job_fingerprint({{input_}, dir_.path() + "/model", "f32", {16, 4}, false, npy_});
  }

  JobRun run(const std::string& out, int stop_after_rounds = -1, bool finish = true) {
    JobRun r;
    std::unique_ptr<ResumableJob> job;
    r.status = ResumableJob::open(out, npy_, kDim, fingerprint(), &job);
    if (!r.status.ok()) return r;
    r.start = job->start();
    if (r.start == ResumableJob::Start::kFinished || r.start == ResumableJob::Start::kNothing) {
      r.totals = job->committed();
      return r;
    }
    std::unique_ptr<DocumentReader> reader;
    EXPECT_TRUE(DocumentReader::open({input_}, {}, &reader).ok());
    r.status = job->skip_committed(*reader);
    if (!r.status.ok()) return r;
    FakeModel model(kDim, 16);
    PipelineOptions options;
    options.window = {16, 4};
    options.round_bytes = 150;
    EXPECT_TRUE(resolve_options(model, &options).ok());
    Context ctx(ContextOptions{2});
    int rounds = 0;
    PipelineCallbacks callbacks;
    callbacks.on_round_written = [&](const PipelineStats& s) {
      TESSERA_RETURN_IF_ERROR(job->commit(s));
      if (++rounds == stop_after_rounds) return internal_error("killed");
      return Status::Ok();
    };
    r.status = run_pipeline(*reader, model, options, job->writer(), ctx, callbacks, &r.stats);
    if (r.status.ok() && finish) r.status = job->finish(r.stats);
    r.totals = job->totals(r.stats);
    return r;
  }

  // The files beside the output, to check nothing is left behind.
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_.path())) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  bool npy_ = false;
  TempDir dir_;
  std::string input_;
};

TEST_P(ResumableJobTest, StoppedTornAndResumedGivesTheSameBytes) {
  const std::string whole = output("whole");
  const JobRun once = run(whole);
  ASSERT_TRUE(once.status.ok()) << once.status.to_string();
  EXPECT_EQ(once.start, ResumableJob::Start::kNew);
  EXPECT_EQ(once.stats.documents, 39);
  EXPECT_EQ(once.stats.skipped, 1);

  const std::string out = output("resumed");
  const JobRun first = run(out, 3);
  ASSERT_FALSE(first.status.ok());
  EXPECT_FALSE(fs::exists(out));
  const std::string partial = out + ".partial";
  ASSERT_TRUE(fs::exists(partial));
  // The next round had started to be written when the process died.
  append(partial, npy_ ? std::string(13, '\x7f') : "{\"id\": 12, \"chu");
  if (npy_) append(npy_index_path(out) + ".partial", "{\"id\"");

  const JobRun second = run(out);
  ASSERT_TRUE(second.status.ok()) << second.status.to_string();
  EXPECT_EQ(second.start, ResumableJob::Start::kContinue);
  EXPECT_GT(second.stats.items, 0);
  EXPECT_LT(second.stats.items, 40);
  EXPECT_EQ(second.totals.items, 40);
  EXPECT_EQ(second.totals.documents, 39);
  EXPECT_EQ(second.totals.skipped, 1);
  EXPECT_EQ(second.totals.rows, once.stats.rows);

  EXPECT_EQ(slurp(out), slurp(whole));
  if (npy_) {
    EXPECT_EQ(slurp(npy_index_path(out)), slurp(npy_index_path(whole)));
  }
  for (const std::string& name : listing()) {
    EXPECT_EQ(name.find(".partial"), std::string::npos) << name;
    EXPECT_EQ(name.find(".checkpoint"), std::string::npos) << name;
  }

  // Again: the job is done and there is nothing to resume.
  const JobRun third = run(out);
  ASSERT_TRUE(third.status.ok());
  EXPECT_EQ(third.start, ResumableJob::Start::kNothing);
  EXPECT_EQ(slurp(out), slurp(whole));
}

TEST_P(ResumableJobTest, AKillBetweenTheLastCheckpointAndTheRenameIsFinishedByTheNextRun) {
  const std::string whole = output("whole");
  ASSERT_TRUE(run(whole).status.ok());
  const std::string out = output("late");
  // Every round committed, then "killed" before finish().
  ASSERT_TRUE(run(out, -1, false).status.ok());
  Checkpoint c;
  bool found = false;
  ASSERT_TRUE(load_checkpoint(checkpoint_path(out), &c, &found).ok());
  ASSERT_TRUE(found);
  EXPECT_EQ(c.done.items, 40);
  c.complete = true;  // as finish() leaves it just before renaming
  ASSERT_TRUE(save_checkpoint(checkpoint_path(out), c).ok());

  const JobRun last = run(out);
  ASSERT_TRUE(last.status.ok()) << last.status.to_string();
  EXPECT_EQ(last.start, ResumableJob::Start::kFinished);
  EXPECT_EQ(last.totals.rows, c.done.rows);
  EXPECT_EQ(slurp(out), slurp(whole));
  EXPECT_FALSE(fs::exists(checkpoint_path(out)));
  EXPECT_FALSE(fs::exists(out + ".partial"));
}

TEST_P(ResumableJobTest, AChangedInputIsRefusedNamingTheFile) {
  const std::string out = output("changed");
  ASSERT_FALSE(run(out, 2).status.ok());
  append(input_, nlohmann::json{{"id", 99}, {"text", "one more"}}.dump() + "\n");
  const JobRun again = run(out);
  ASSERT_FALSE(again.status.ok());
  EXPECT_NE(
      again.status.message().find("is for a different job: inputs[0] (" + input_ + ").size: is "),
      std::string::npos)
      << again.status.message();
  EXPECT_TRUE(fs::exists(out + ".partial")) << "a refused resume touches nothing";
}

TEST_P(ResumableJobTest, ASecondWriterOfTheSameOutputIsRefused) {
  const std::string out = output("locked");
  std::unique_ptr<ResumableJob> first;
  ASSERT_TRUE(ResumableJob::open(out, npy_, kDim, fingerprint(), &first).ok());
  std::unique_ptr<ResumableJob> second;
  const Status s = ResumableJob::open(out, npy_, kDim, fingerprint(), &second);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("resume: another job is writing"), std::string::npos) << s.message();
}

INSTANTIATE_TEST_SUITE_P(JsonlAndNpy, ResumableJobTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Npy" : "Jsonl"; });

}  // namespace
}  // namespace tessera::pipeline
