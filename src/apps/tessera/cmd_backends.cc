// tessera backends [--explain SHAPE] [--json]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "attention/observers/canary.h"
#include "commands.h"
#include "runtime/cpu_features.h"
#include "verify/case_text.h"
#include "verify/plain_case.h"

namespace tessera::cli {

namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::vector<std::string> features_of(const Capabilities& c) {
  std::vector<std::string> f;
  if (c.causal) f.emplace_back("causal");
  if (c.window) f.emplace_back("window");
  if (c.bias) f.emplace_back("bias");
  if (c.varlen) f.emplace_back("varlen");
  if (c.softcap) f.emplace_back("softcap");
  if (c.lse) f.emplace_back("lse");
  if (c.gqa) f.emplace_back("gqa");
  if (c.dv_differs) f.emplace_back("dv!=d");
  return f;
}

std::vector<std::string> dtypes_of(const Capabilities& c) {
  std::vector<std::string> d;
  for (DType t : c.dtypes) d.emplace_back(dtype_name(t));
  return d;
}

// What `auto` orders by: the tuned table's path, else the runtime's note
// (the shipped default ranking for this CPU kind, or the priority order, and
// why no tuned table).
std::string tuning_text(const AppState& state) {
  const ObserveState& obs = state.observe_state();
  if (!obs.tuning_path.empty()) return "tuned table " + obs.tuning_path;
  return obs.tuning_note.empty() ? "auto uses the priority order" : obs.tuning_note;
}

int list_backends(AppState& state, bool json) {
  nlohmann::json rows = nlohmann::json::array();
  // What `--canary NAME` runs recorded (docs/OBSERVABILITY.md).
  const std::string record_path = canary_record_path(state.observe);
  CanaryRecords canary;
  if (Status s = load_canary_records(record_path, &canary); !s.ok()) return fail(s);
  // AVAILABLE comes last: its reasons ("no: this CPU has no AMX-BF16 tiles
  // ...") are long and would push every later column out of line.
  int features_width = static_cast<int>(std::strlen("FEATURES"));
  for (Backend* b : state.registry().backends()) {
    features_width = std::max(features_width,
                              static_cast<int>(join(features_of(b->capabilities()), ",").size()));
  }
  if (!json) {
    std::printf("%-18s %-7s %-5s %-12s %-14s %-9s %-*s %s\n", "NAME", "DEVICE", "PRIO", "MATURITY",
                "DTYPES", "HEAD DIM", features_width, "FEATURES", "AVAILABLE");
  }
  for (Backend* b : state.registry().backends()) {
    const Capabilities caps = b->capabilities();
    const Availability av = b->availability();
    const std::string head_dims =
        std::to_string(caps.min_head_dim) + "-" +
        (caps.max_head_dim >= (1 << 20) ? std::string("any") : std::to_string(caps.max_head_dim));
    if (json) {
      rows.push_back({{"name", b->name()},
                      {"device", b->device().to_string()},
                      {"priority", b->priority()},
                      {"maturity", maturity_name(caps.maturity)},
                      {"available", av.available},
                      {"unavailable_reason", av.reason},
                      {"dtypes", dtypes_of(caps)},
                      {"min_head_dim", caps.min_head_dim},
                      {"max_head_dim", caps.max_head_dim},
                      {"features", features_of(caps)},
                      {"canary", canary_buckets_to_json(canary[std::string(b->name())])}});
      continue;
    }
    std::printf(
        "%-18.*s %-7s %-5d %-12.*s %-14s %-9s %-*s %s\n", static_cast<int>(b->name().size()),
        b->name().data(), b->device().to_string().c_str(), b->priority(),
        static_cast<int>(maturity_name(caps.maturity).size()), maturity_name(caps.maturity).data(),
        join(dtypes_of(caps), ",").c_str(), head_dims.c_str(), features_width,
        join(features_of(caps), ",").c_str(), av.available ? "yes" : ("no: " + av.reason).c_str());
  }
  if (json) {
    std::printf("%s\n", rows.dump(2).c_str());
    return 0;
  }
  std::printf("\ncanary records (%s):\n", record_path.c_str());
  for (Backend* b : state.registry().backends()) {
    const auto it = canary.find(std::string(b->name()));
    std::printf("  %-18.*s %s\n", static_cast<int>(b->name().size()), b->name().data(),
                it == canary.end() ? "none (run with --canary NAME to earn one)"
                                   : canary_summary(it->second).c_str());
  }
  std::printf("tuning: %s\n", tuning_text(state).c_str());
  std::printf("cpu kind: %s\n", cpu_kind_description().c_str());
  return 0;
}

const char* verdict_name(BackendVerdict::Kind k) {
  switch (k) {
    case BackendVerdict::Kind::kChosen:
      return "chosen";
    case BackendVerdict::Kind::kEligible:
      return "eligible";
    case BackendVerdict::Kind::kRejected:
      return "rejected";
  }
  return "?";
}

int explain(AppState& state, const std::string& shape_text, bool json) {
  verify::AttentionCase spec;
  if (Status s = verify::parse_case(shape_text, &spec); !s.ok()) return fail(s);
  const verify::PlainCase shapes = verify::PlainCase::placeholder(spec);
  const AttentionArgs& args = shapes.args();
  const Explanation ex = state.dispatcher().explain(args, state.context());
  if (json) {
    nlohmann::json verdicts = nlohmann::json::array();
    for (const auto& v : ex.verdicts) {
      verdicts.push_back(
          {{"name", v.name}, {"verdict", verdict_name(v.kind)}, {"reasons", v.reasons}});
    }
    nlohmann::json out = {{"shape", describe_shape(args)},
                          {"policy", state.policy().to_string()},
                          {"args_valid", ex.args_status.ok()},
                          {"args_error", ex.args_status.ok() ? "" : ex.args_status.message()},
                          {"chosen", ex.chosen},
                          {"tuning", tuning_text(state)},
                          {"cpu_kind", cpu_kind_description()},
                          {"backends", verdicts}};
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("shape:  %s\npolicy: %s\ntuning: %s\ncpu:    %s\n", describe_shape(args).c_str(),
                state.policy().to_string().c_str(), tuning_text(state).c_str(),
                cpu_kind_description().c_str());
    if (!ex.args_status.ok()) std::printf("invalid args: %s\n", ex.args_status.message().c_str());
    std::printf("chosen: %s\n\n", ex.chosen.empty() ? "(none)" : ex.chosen.c_str());
    for (const auto& v : ex.verdicts) {
      std::printf("  %-18s %-9s %s\n", v.name.c_str(), verdict_name(v.kind),
                  join(v.reasons, "; ").c_str());
    }
  }
  return ex.chosen.empty() ? 1 : 0;
}

}  // namespace

void add_backends_command(CLI::App& app, AppState& state) {
  auto* cmd = app.add_subcommand(
      "backends",
      "List the attention backends of this build (device, dtypes, masks, head dims, features,\n"
      "availability), or explain which one a shape would get and why the others would not.");
  static std::string explain_shape;
  static bool json = false;
  cmd->add_option("--explain", explain_shape,
                  "Shape to explain, e.g. \"B=2,Sq=128,Sk=128,Hq=8,Hkv=8,D=64,dtype=bf16,"
                  "mask=causal\" (keys: B S Sq Sk H Hq Hkv D Dv dtype mask window layout lse bias "
                  "varlen softcap)");
  cmd->add_flag("--json", json, "Machine-readable output");
  cmd->callback([&state] {
    if (Status s = state.init(); !s.ok()) {
      exit_code = fail(s);
      return;
    }
    exit_code =
        explain_shape.empty() ? list_backends(state, json) : explain(state, explain_shape, json);
  });
}

}  // namespace tessera::cli
