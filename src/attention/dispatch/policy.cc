// Parsing of the dispatch policy text shared by the API, the CLI flag
// --attention= and the environment variable TESSERA_ATTENTION.
#include <cstdlib>
#include <string>

#include "runtime/bounded_text.h"
#include "tessera/dispatcher.h"

namespace tessera {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Backend names are short identifiers ("cpu.flash", a variant
// "cpu.flash:bf16dot"); checking the form here keeps a hostile
// TESSERA_ATTENTION from being echoed whole by every report that names an
// unknown backend.
constexpr size_t kMaxNameBytes = 64;
bool plausible_name(std::string_view name) {
  if (name.size() > kMaxNameBytes) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-' || c == ':';
    if (!ok) return false;
  }
  return true;
}

Status split_names(std::string_view list, std::string_view clause, std::vector<std::string>* out) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view name = trim(list.substr(0, comma));
    if (name.empty()) {
      return invalid_argument("attention policy clause " + quote_bounded(clause) +
                              " has an empty backend name");
    }
    if (!plausible_name(name)) {
      return invalid_argument("attention policy clause " + quote_bounded(clause) +
                              ": backend name " + quote_bounded(name) + " is not a name (up to " +
                              std::to_string(kMaxNameBytes) + " of A-Z a-z 0-9 . _ - :)");
    }
    out->emplace_back(name);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return Status::Ok();
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

}  // namespace

Status parse_policy(std::string_view text, Policy* out) {
  Policy policy;
  while (!text.empty()) {
    const size_t semi = text.find(';');
    const std::string_view clause = trim(text.substr(0, semi));
    text = semi == std::string_view::npos ? std::string_view{} : text.substr(semi + 1);
    if (clause.empty() || clause == "auto") continue;
    // A clause is KIND:NAMES, split at its first ':' (names may hold more:
    // "only:cpu.flash:bf16dot"), or a bare list without any ':'.
    const size_t colon = clause.find(':');
    if (colon == std::string_view::npos) {
      TESSERA_RETURN_IF_ERROR(split_names(clause, clause, &policy.only));
      continue;
    }
    const std::string_view kind = trim(clause.substr(0, colon));
    const std::string_view names = clause.substr(colon + 1);
    if (kind == "allow") {
      if (trim(names) != "experimental") {
        return invalid_argument("attention policy clause " + quote_bounded(clause) +
                                ": allow: takes 'experimental'");
      }
      policy.allow_experimental = true;
      continue;
    }
    std::vector<std::string>* target = kind == "only"     ? &policy.only
                                       : kind == "prefer" ? &policy.prefer
                                       : kind == "deny"   ? &policy.deny
                                       : kind == "fail"   ? &policy.fail
                                                          : nullptr;
    if (target == nullptr) {
      return invalid_argument(
          "attention policy: unknown clause " + quote_bounded(kind) + " in " +
          quote_bounded(clause) +
          "; expected auto, only:, prefer:, deny:, fail:, allow:experimental or a "
          "backend list (a name with ':', such as cpu.flash:f32, needs its "
          "clause: only:cpu.flash:f32)");
    }
    TESSERA_RETURN_IF_ERROR(split_names(names, clause, target));
  }
  *out = std::move(policy);
  return Status::Ok();
}

std::string Policy::to_string() const {
  std::string s;
  if (!only.empty()) s += "only:" + join(only);
  if (!prefer.empty()) s += (s.empty() ? "" : ";") + std::string("prefer:") + join(prefer);
  if (!deny.empty()) s += (s.empty() ? "" : ";") + std::string("deny:") + join(deny);
  if (!fail.empty()) s += (s.empty() ? "" : ";") + std::string("fail:") + join(fail);
  if (allow_experimental) s += (s.empty() ? "" : ";") + std::string("allow:experimental");
  return s.empty() ? "auto" : s;
}

}  // namespace tessera
