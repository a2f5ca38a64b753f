#include "verify/runner.h"

#include <algorithm>
#include <limits>

#include "attention/dispatch/run_guarded.h"
#include "attention/staging/staging.h"
#include "tessera/dispatcher.h"
#include "verify/naive.h"
#include "verify/tolerance.h"

namespace tessera::verify {

namespace {

constexpr std::string_view kExpectedOwner = "verify.expected";
constexpr std::string_view kStagedOwner = "verify.staged";  // the case on a device

// At least one float: a case with no query rows still passes its expected
// outputs as non-null views.
Status allocate_floats(Context& ctx, int64_t n, Buffer* out) {
  return Buffer::allocate(ctx.allocator(),
                          static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(float),
                          kExpectedOwner, out);
}

std::string join(const std::vector<std::string>& parts) {
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s;
}

CaseOutcome skip(std::string reason) { return {Verdict::kSkip, {std::move(reason)}}; }

// Judges out (and lse when the case asks for it) against the expectation.
void judge_outputs(const MaterializedCase& m, const Expected& expected, Context& ctx,
                   CaseOutcome* outcome) {
  const AttentionCase& c = m.spec();
  const int64_t rows = m.rows();
  Buffer got_out, got_lse;
  Status s = allocate_floats(ctx, rows * c.dv, &got_out);
  if (s.ok() && c.lse) s = allocate_floats(ctx, rows, &got_lse);
  if (!s.ok()) {
    outcome->verdict = Verdict::kFail;
    outcome->messages.push_back("harness: " + s.to_string());
    return;
  }
  m.read_out(got_out.as<float>());
  const auto name = [&](int64_t row) { return m.row_name(row); };
  std::vector<Judgement> judgements;
  judgements.push_back(
      judge({"out", got_out.as<const float>(), expected.out_ref(), expected.out_naive(),
             expected.lse_ref(), rows, c.dv, output_floor(c.dtype), 0.0f}));
  if (c.lse) {
    m.read_lse(got_lse.as<float>());
    judgements.push_back(
        judge({"lse", got_lse.as<const float>(), expected.lse_ref(), expected.lse_naive(),
               expected.lse_ref(), rows, 1, lse_floor(), -std::numeric_limits<float>::infinity()}));
  }
  for (const Judgement& j : judgements) {
    if (!j.ok()) outcome->verdict = Verdict::kFail;
    outcome->messages.push_back(j.describe(name));
  }
}

}  // namespace

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kFail:
      return "FAIL";
    case Verdict::kSkip:
      return "skip";
    case Verdict::kAbsent:
      return "absent";
  }
  return "?";
}

std::string CaseOutcome::summary() const { return join(messages); }

std::vector<std::string> leaked_since(const std::map<std::string, OwnerStats>& before,
                                      const std::map<std::string, OwnerStats>& after) {
  std::vector<std::string> leaks;
  for (const auto& [owner, stats] : after) {
    auto it = before.find(owner);
    const size_t was = it == before.end() ? 0 : it->second.live_bytes;
    if (stats.live_bytes > was) {
      leaks.push_back("leak: " + owner + " holds " + std::to_string(stats.live_bytes - was) +
                      " more bytes after the call");
    }
  }
  return leaks;
}

Status Expected::compute(const MaterializedCase& m, Backend& reference, Context& ctx,
                         Expected* out) {
  const AttentionCase& c = m.spec();
  Expected e;
  TESSERA_RETURN_IF_ERROR(allocate_floats(ctx, m.rows() * c.dv, &e.out_ref_));
  TESSERA_RETURN_IF_ERROR(allocate_floats(ctx, m.rows(), &e.lse_ref_));
  TESSERA_RETURN_IF_ERROR(allocate_floats(ctx, m.rows() * c.dv, &e.out_naive_));
  TESSERA_RETURN_IF_ERROR(allocate_floats(ctx, m.rows(), &e.lse_naive_));
  std::optional<AttentionProblem> ref_problem;
  Status s = AttentionProblem::make(m.logical_args(e.out_ref_.as<float>(), e.lse_ref_.as<float>()),
                                    &ref_problem);
  if (s.ok()) s = run_backend_guarded(reference, *ref_problem, ctx);
  if (!s.ok()) return internal_error(std::string(reference.name()) + " failed: " + s.to_string());
  TESSERA_RETURN_IF_ERROR(naive_attention(
      m.logical_args(e.out_naive_.as<float>(), e.lse_naive_.as<float>()), c.dtype, ctx));
  *out = std::move(e);
  return Status::Ok();
}

std::optional<CaseOutcome> cannot_run_here(const Backend& backend) {
  if (std::string why = device_staging_problem(backend.device()); !why.empty()) {
    return CaseOutcome{Verdict::kAbsent, {std::move(why)}};
  }
  if (Availability av = backend.availability(); !av.available) {
    return skip("unavailable: " + av.reason);
  }
  return std::nullopt;
}

CaseOutcome check_backend(Backend& backend, MaterializedCase& m, const Expected& expected,
                          Context& ctx) {
  if (auto no = cannot_run_here(backend)) return *std::move(no);
  m.poison_outputs();
  // On a device the backend sees a staged copy: every guarded tensor whole.
  std::optional<StagedArgs> staged;
  if (const Device device = backend.device(); device.kind != DeviceKind::kCpu) {
    StagedArgs s;
    if (Status st = StagedArgs::stage(m.args(), device, kGuardBytes, kStagedOwner, ctx, &s);
        !st.ok()) {
      return {Verdict::kFail,
              {"harness: staging onto " + device.to_string() + ": " + st.to_string()}};
    }
    staged = std::move(s);
  }
  std::optional<AttentionProblem> problem;
  if (Status s = AttentionProblem::make(staged ? staged->args() : m.args(), &problem); !s.ok()) {
    return {Verdict::kFail, {"harness: the case is invalid: " + s.to_string()}};
  }
  if (auto reasons = backend.reasons(*problem, ctx); !reasons.empty()) {
    return skip("rejected by check(): " + join(reasons));
  }
  TrackingAllocator* device_alloc = staged ? staged->allocator() : nullptr;
  const auto before = ctx.allocator().by_owner();
  const auto device_before = device_alloc ? device_alloc->by_owner() : decltype(before){};
  const Status s = run_backend_guarded(backend, *problem, ctx);
  CaseOutcome outcome;
  auto leaks = leaked_since(before, ctx.allocator().by_owner());
  if (device_alloc != nullptr) {
    for (auto& leak : leaked_since(device_before, device_alloc->by_owner())) {
      leaks.push_back(std::move(leak) + " (" + backend.device().to_string() + ")");
    }
  }
  for (auto& leak : leaks) {
    outcome.verdict = Verdict::kFail;
    outcome.messages.push_back(std::move(leak));
  }
  if (!s.ok()) {
    outcome.verdict = Verdict::kFail;
    outcome.messages.push_back("run failed: " + s.to_string());
  }
  if (staged) {
    Status back = staged->copy_outputs_back(ctx);
    if (back.ok()) back = staged->copy_inputs_back(ctx);
    staged.reset();  // the device copies are freed before the next backend
    if (!back.ok()) {
      return {
          Verdict::kFail,
          {"harness: copying back from " + backend.device().to_string() + ": " + back.to_string()}};
    }
  }
  for (const Status& guard : {m.check_output_guards(), m.check_inputs_untouched()}) {
    if (!guard.ok()) {
      outcome.verdict = Verdict::kFail;
      outcome.messages.push_back(guard.message());
    }
  }
  if (s.ok()) judge_outputs(m, expected, ctx, &outcome);
  return outcome;
}

std::vector<CaseOutcome> run_case_on_each(const std::vector<Backend*>& backends, Backend& reference,
                                          const AttentionCase& spec, Context& ctx) {
  MaterializedCase m;
  Expected expected;
  Status s = MaterializedCase::create(spec, ctx.allocator(), &m);
  if (s.ok()) s = Expected::compute(m, reference, ctx, &expected);
  std::vector<CaseOutcome> outcomes;
  outcomes.reserve(backends.size());
  for (Backend* backend : backends) {
    outcomes.push_back(s.ok() ? check_backend(*backend, m, expected, ctx)
                              : CaseOutcome{Verdict::kFail, {"harness: " + s.to_string()}});
  }
  return outcomes;
}

CaseOutcome run_case(Backend& backend, Backend& reference, const AttentionCase& spec,
                     Context& ctx) {
  if (auto no = cannot_run_here(backend)) return *std::move(no);
  return run_case_on_each({&backend}, reference, spec, ctx).front();
}

CaseOutcome check_invalid(const Registry& registry, std::string_view backend, const InvalidCase& c,
                          Context& ctx) {
  MaterializedCase m;
  if (Status s = MaterializedCase::create(c.base, ctx.allocator(), &m); !s.ok()) {
    return {Verdict::kFail, {"harness: " + s.to_string()}};
  }
  AttentionArgs args = m.args();
  c.mutate(args, m.cu_seqlens_q(), m.cu_seqlens_k());
  Policy policy;
  policy.only = {std::string(backend)};
  Dispatcher dispatcher(registry, policy);
  const auto before = ctx.allocator().by_owner();
  const Status s = dispatcher.run(args, ctx);
  CaseOutcome outcome;
  outcome.messages = leaked_since(before, ctx.allocator().by_owner());
  if (s.code() != StatusCode::kInvalidArgument) {
    outcome.messages.push_back("want InvalidArgument naming '" + c.field + "', got " +
                               s.to_string());
  } else if (s.message().find(c.field) == std::string::npos) {
    outcome.messages.push_back("the error does not name '" + c.field + "': " + s.to_string());
  }
  for (const Status& check :
       {m.check_outputs_poisoned(), m.check_output_guards(), m.check_inputs_untouched()}) {
    if (!check.ok()) outcome.messages.push_back(check.message());
  }
  if (!outcome.messages.empty()) {
    outcome.verdict = Verdict::kFail;
  } else {
    outcome.messages.push_back(s.to_string());
  }
  return outcome;
}

}  // namespace tessera::verify
