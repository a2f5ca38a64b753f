// backend.run(args, ctx), with an exception turned into an Internal status:
// how the dispatcher, shadow/canary runs and the conformance runner call a
// backend, so a throwing backend is reported the same way everywhere.
#pragma once

#include "tessera/backend.h"

namespace tessera {

Status run_backend_guarded(Backend& backend, const AttentionArgs& args, Context& ctx);

}  // namespace tessera
