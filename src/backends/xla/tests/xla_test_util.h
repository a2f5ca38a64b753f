// Helpers shared by the xla test binaries (xla_unit_test, xla_plugin_test).
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "tessera/backend.h"

namespace tessera::xla_test {

// The backend's workspace for plain args (a problem is validated first).
inline size_t workspace_of(const Backend& backend, const AttentionArgs& args) {
  std::optional<AttentionProblem> p;
  const Status st = AttentionProblem::make(args, &p);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return p ? backend.workspace_bytes(*p, Context{}) : 0;
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace tessera::xla_test
