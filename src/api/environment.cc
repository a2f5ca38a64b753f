#include "api/environment.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "runtime/build_tree.h"

namespace tessera::api {

std::string environment_variable(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

Status policy_or_environment(const std::string& text, Policy* out) {
  if (!text.empty()) {
    Status s = parse_policy(text, out);
    return s.ok() ? s : invalid_option("attention", ": " + s.message());
  }
  const std::string env = environment_variable("TESSERA_ATTENTION");
  if (env.empty()) {
    *out = Policy{};
    return Status::Ok();
  }
  Status s = parse_policy(env, out);
  return s.ok() ? s : invalid_argument("TESSERA_ATTENTION: " + s.message());
}

Status weights_or_environment(const std::string& value, model::WeightPrecision* out) {
  if (!value.empty()) return model::parse_weight_precision(value, "weights", out);
  const std::string env = environment_variable("TESSERA_WEIGHTS");
  if (env.empty()) {
    *out = model::WeightPrecision::kF32;
    return Status::Ok();
  }
  return model::parse_weight_precision(env, "TESSERA_WEIGHTS", out);
}

pipeline::ModelSearch model_search() {
  pipeline::ModelSearch s;
  s.env_model = environment_variable("TESSERA_MODEL");
  std::string home = environment_variable("HOME");
  std::vector<char> buffer(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (home.empty() && getpwuid_r(::getuid(), &pw, buffer.data(), buffer.size(), &found) == 0 &&
      found != nullptr) {
    home = found->pw_dir;  // no $HOME (a service): the account's home
  }
  const std::string data_dir = environment_variable("TESSERA_DATA_DIR");
  const std::string xdg = environment_variable("XDG_DATA_HOME");
  pipeline::data_dir_from(data_dir.empty() ? nullptr : data_dir.c_str(),
                          xdg.empty() ? nullptr : xdg.c_str(),
                          home.empty() ? nullptr : home.c_str(), &s.data_dir, &s.data_dir_source);
  s.checkout_model = checkout_path("models/all-MiniLM-L6-v2");
  const std::string hub_cache = environment_variable("HF_HUB_CACHE");
  const std::string hf_home = environment_variable("HF_HOME");
  const std::string xdg_cache = environment_variable("XDG_CACHE_HOME");
  const auto or_null = [](const std::string& v) { return v.empty() ? nullptr : v.c_str(); };
  pipeline::hub_cache_from(or_null(hub_cache), or_null(hf_home), or_null(xdg_cache), or_null(home),
                           &s.hub_cache, &s.hub_cache_source);
  return s;
}

namespace {

// $XDG_<kind>_HOME/tessera/FILE, else $HOME/<fallback>/tessera/FILE.
std::string user_file(const char* xdg_variable, const char* home_relative, const char* file) {
  if (std::string xdg = environment_variable(xdg_variable); !xdg.empty()) {
    return xdg + "/tessera/" + file;
  }
  if (std::string home = environment_variable("HOME"); !home.empty()) {
    return home + "/" + home_relative + "/tessera/" + file;
  }
  return "";
}

}  // namespace

std::string default_tuning_path() { return user_file("XDG_CACHE_HOME", ".cache", "tuning.json"); }

std::string default_canary_path() {
  return user_file("XDG_STATE_HOME", ".local/state", "canary.json");
}

}  // namespace tessera::api
