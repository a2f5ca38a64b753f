// Where a model comes from (pipeline/model_location.h): the order of the one
// rule, with the environment given explicitly (ModelSearch), the data
// directory's variables, and the registry `tessera models add / remove /
// default` drives (pipeline/model_registry.h), on data/models/tiny-bert.
#include "pipeline/model_location.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "pipeline/model_registry.h"
#include "runtime/build_tree.h"
#include "temp_dir.h"

namespace tessera::pipeline {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

const std::string kTinyBert = std::string(TESSERA_SOURCE_DIR) + "/data/models/tiny-bert";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A search over a scratch data directory, the environment cleared.
struct Scratch {
  TempDir tmp;
  ModelSearch search;
  Scratch() {
    search.data_dir = tmp.path() + "/data";
    search.data_dir_source = "$TESSERA_DATA_DIR";
  }
  std::string folder(const std::string& name) const {
    std::string dir = tmp.path() + "/" + name;
    fs::create_directories(dir);
    return dir;
  }
  // A registered model that is only a folder (resolution does not load it).
  void register_folder(const std::string& name) const {
    fs::create_directories(search.data_dir + "/models/" + name);
  }
  ResolvedModel resolve(const std::string& model) const {
    ResolvedModel r;
    const Status st = resolve_model(search, model, &r);
    EXPECT_TRUE(st.ok()) << st.to_string();
    return r;
  }
  Status fails(const std::string& model) const {
    ResolvedModel r;
    return resolve_model(search, model, &r);
  }
};

TEST(DataDir, TesseraDataDirThenXdgThenHome) {
  std::string dir, source;
  data_dir_from("/d", "/x", "/h", &dir, &source);
  EXPECT_EQ(dir, "/d");
  EXPECT_EQ(source, "$TESSERA_DATA_DIR");
  data_dir_from(nullptr, "/x", "/h", &dir, &source);
  EXPECT_EQ(dir, "/x/tessera");
  EXPECT_EQ(source, "$XDG_DATA_HOME");
  data_dir_from("", "relative/xdg", "/h", &dir, &source);  // empty and relative are unset
  EXPECT_EQ(dir, "/h/.local/share/tessera");
  EXPECT_EQ(source, "$HOME");
  data_dir_from(nullptr, nullptr, nullptr, &dir, &source);
  EXPECT_EQ(dir, "");
}

TEST(ResolveModel, TheNamedModelComesFirst) {
  Scratch s;
  const std::string dir = s.folder("mine");
  s.search.env_model = s.folder("from-env");
  s.register_folder("only");
  s.search.checkout_model = s.folder("checkout");
  EXPECT_EQ(s.resolve(dir).dir, dir);
  // A name: the registered model of that name.
  EXPECT_EQ(s.resolve("only").dir, s.search.data_dir + "/models/only");
}

TEST(ResolveModel, ThenTesseraModelThenTheDataDirectoryThenTheCheckout) {
  Scratch s;
  s.search.checkout_model = s.folder("checkout");
  EXPECT_EQ(s.resolve("").dir, s.search.checkout_model);
  EXPECT_EQ(s.resolve("").source, "this build's default model");
  s.register_folder("only");  // the only model is the default
  EXPECT_EQ(s.resolve("").dir, s.search.data_dir + "/models/only");
  s.search.env_model = s.folder("from-env");
  EXPECT_EQ(s.resolve("").dir, s.search.env_model);
  EXPECT_EQ(s.resolve("").source, "$TESSERA_MODEL");
  s.search.env_model = "only";  // $TESSERA_MODEL may name a registered model too
  EXPECT_EQ(s.resolve("").dir, s.search.data_dir + "/models/only");
}

TEST(ResolveModel, SeveralRegisteredModelsNeedAMarkedDefault) {
  Scratch s;
  s.register_folder("a");
  s.register_folder("b");
  Status st = s.fails("");
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_TRUE(contains(st.message(), "2 models registered and none marked the default"))
      << st.message();
  ASSERT_TRUE(ModelRegistry(s.search.data_dir).set_default("b").ok());
  EXPECT_EQ(s.resolve("").dir, s.search.data_dir + "/models/b");
}

TEST(ResolveModel, ANamedModelThatIsNotThereIsAnErrorNotAFallThrough) {
  Scratch s;
  s.register_folder("only");
  s.search.checkout_model = s.folder("checkout");
  Status st = s.fails("nope");
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(st.message(), "model \"nope\" is neither a model directory nor"))
      << st.message();
  EXPECT_TRUE(contains(st.message(), "only registered in")) << st.message();
  s.search.env_model = s.tmp.path() + "/gone";
  st = s.fails("");
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(st.message(), "$TESSERA_MODEL \"" + s.search.env_model)) << st.message();
  // A marked default whose folder was deleted by hand.
  s.search.env_model.clear();
  s.register_folder("other");
  ASSERT_TRUE(ModelRegistry(s.search.data_dir).set_default("other").ok());
  fs::remove_all(s.search.data_dir + "/models/other");
  st = s.fails("");
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(st.message(), "the default model other of")) << st.message();
}

TEST(ResolveModel, NothingFoundSaysHowToRegisterAModel) {
  Scratch s;
  Status st = s.fails("");
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  for (const char* part : {"$TESSERA_MODEL is not set", "has no model registered",
                           "tessera models add DIR", "/data/models/NAME"}) {
    EXPECT_TRUE(contains(st.message(), part)) << part << " not in: " << st.message();
  }
  s.search.checkout_model = s.tmp.path() + "/checkout-gone";
  st = s.fails("");
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_TRUE(contains(st.message(), "checkout-gone is missing too")) << st.message();
}

TEST(HubCache, HfHubCacheThenHfHomeThenXdgCacheThenHome) {
  std::string dir, source;
  hub_cache_from("/c", "/hf", "/x", "/h", &dir, &source);
  EXPECT_EQ(dir, "/c");
  EXPECT_EQ(source, "$HF_HUB_CACHE");
  hub_cache_from(nullptr, "/hf", "/x", "/h", &dir, &source);
  EXPECT_EQ(dir, "/hf/hub");
  hub_cache_from("", nullptr, "/x", "/h", &dir, &source);
  EXPECT_EQ(dir, "/x/huggingface/hub");
  hub_cache_from(nullptr, nullptr, "relative", "/h", &dir, &source);
  EXPECT_EQ(dir, "/h/.cache/huggingface/hub");
  EXPECT_EQ(source, "$HOME");
  hub_cache_from(nullptr, nullptr, nullptr, nullptr, &dir, &source);
  EXPECT_EQ(dir, "");
}

TEST(HubCache, IdsHaveTheHubsShape) {
  for (const char* ok : {"BAAI/bge-small-en-v1.5", "bert-base-uncased", "org/name@main",
                         "org/name@0123456789abcdef0123456789abcdef01234567"}) {
    EXPECT_TRUE(looks_like_hub_id(ok)) << ok;
  }
  for (const char* no : {"", "a/b/c", "/abs/path", "org/", "/name", "org/na me", "org/name@",
                         "../up", "org/.hidden"}) {
    EXPECT_FALSE(looks_like_hub_id(no)) << no;
  }
}

// A Hub cache laid out as huggingface_hub writes it: refs/main names the
// commit whose snapshot holds the files (tiny-bert's, as links to blobs are).
TEST(HubCache, AHubIdResolvesFromTheCacheNeverTheNetwork) {
  Scratch s;
  const std::string commit = "0123456789abcdef0123456789abcdef01234567";
  const std::string repo = s.tmp.path() + "/hub/models--org--tiny-bert";
  fs::create_directories(repo + "/refs");
  fs::create_directories(repo + "/snapshots");
  fs::create_directory_symlink(kTinyBert, repo + "/snapshots/" + commit);
  {
    std::ofstream(repo + "/refs/main") << commit;  // no newline, as huggingface_hub writes it
    std::ofstream(repo + "/refs/v1") << commit << "\n";
  }
  s.search.hub_cache = s.tmp.path() + "/hub";
  s.search.hub_cache_source = "$HF_HUB_CACHE";
  const std::string snapshot = repo + "/snapshots/" + commit;
  EXPECT_EQ(s.resolve("org/tiny-bert").dir, snapshot);
  EXPECT_TRUE(contains(s.resolve("org/tiny-bert").source, "Hub id org/tiny-bert"));
  EXPECT_EQ(s.resolve("org/tiny-bert@v1").dir, snapshot);
  EXPECT_EQ(s.resolve("org/tiny-bert@" + commit).dir, snapshot);
  // A registered model of the same shape of name comes first (a plain name).
  s.register_folder("tiny-bert");
  EXPECT_TRUE(contains(s.resolve("tiny-bert").source, "registered model tiny-bert"));

  // Not there: where it looked, and the one command that fetches it.
  Status st = s.fails("org/other");
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(st.message(), "models--org--other")) << st.message();
  EXPECT_TRUE(contains(st.message(), "`hf download org/other`")) << st.message();
  EXPECT_TRUE(contains(st.message(), "from $HF_HUB_CACHE")) << st.message();
  st = s.fails("org/tiny-bert@v2");
  EXPECT_TRUE(contains(st.message(), "refs/v2")) << st.message();
  EXPECT_TRUE(contains(st.message(), "`hf download org/tiny-bert`")) << st.message();
  // A path is not taken for a Hub id.
  st = s.fails(s.tmp.path() + "/no/such/folder");
  EXPECT_FALSE(contains(st.message(), "hf download")) << st.message();
}

TEST(ModelRegistry, AddCopiesAndTheFirstBecomesTheDefault) {
  Scratch s;
  ModelRegistry r(s.search.data_dir);
  RegisteredModel added;
  ASSERT_TRUE(r.add(kTinyBert + "/", {}, &added).ok());  // the trailing "/" keeps the name
  EXPECT_EQ(added.name, "tiny-bert");
  EXPECT_TRUE(added.is_default);
  EXPECT_TRUE(added.link_target.empty());
  EXPECT_TRUE(fs::is_regular_file(s.search.data_dir + "/models/tiny-bert/config.json"));
  EXPECT_FALSE(fs::is_symlink(s.search.data_dir + "/models/tiny-bert"));
  EXPECT_EQ(s.resolve("").dir, s.search.data_dir + "/models/tiny-bert");

  // The same name again is refused; another name is a second model, and the
  // default stays.
  Status st = r.add(kTinyBert, {}, nullptr);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(st.message(), "tessera models remove tiny-bert")) << st.message();
  AddModelOptions linked;
  linked.name = "linked";
  linked.link = true;
  ASSERT_TRUE(r.add(kTinyBert, linked, &added).ok());
  EXPECT_FALSE(added.is_default);
  EXPECT_EQ(added.link_target, kTinyBert);
  EXPECT_EQ(r.default_name(), "tiny-bert");
  ASSERT_EQ(r.list().size(), 2u);
  EXPECT_EQ(r.list()[0].name, "linked");
  EXPECT_TRUE(r.list()[1].is_default);

  // Removing a link leaves its folder; removing the default unmarks it, and
  // the one model left is the default again.
  ASSERT_TRUE(r.remove("linked").ok());
  EXPECT_TRUE(fs::is_regular_file(kTinyBert + "/config.json"));
  ASSERT_TRUE(r.add(kTinyBert, linked, nullptr).ok());
  ASSERT_TRUE(r.remove("tiny-bert").ok());
  EXPECT_EQ(r.marked_default(), "");
  EXPECT_EQ(r.default_name(), "linked");
  EXPECT_EQ(r.remove("tiny-bert").code(), StatusCode::kNotFound);
}

TEST(ModelRegistry, RefusesWhatIsNoModelAndNamesThatAreNoFolderName) {
  Scratch s;
  ModelRegistry r(s.search.data_dir);
  Status st = r.add(s.folder("empty"), {}, nullptr);
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(contains(st.message(), "is not a model tessera runs")) << st.message();
  EXPECT_TRUE(contains(st.message(), "config.json")) << st.message();
  EXPECT_TRUE(r.list().empty());
  EXPECT_EQ(r.add(s.tmp.path() + "/missing", {}, nullptr).code(), StatusCode::kNotFound);
  for (const char* bad : {".", "..", ".hidden", "a/b", "../up"}) {  // ("": DIR's own name)
    AddModelOptions o;
    o.name = bad;
    EXPECT_EQ(r.add(kTinyBert, o, nullptr).code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(r.set_default("nothing").code(), StatusCode::kNotFound);
}

TEST(BuildTree, ThisTestRunsFromItsBuildTree) {
  // The installed counterpart (no checkout paths) is scripts/check-install.sh's.
  EXPECT_TRUE(running_from_build_tree());
  EXPECT_EQ(checkout_path("models"), std::string(TESSERA_SOURCE_DIR) + "/models");
}

}  // namespace
}  // namespace tessera::pipeline
