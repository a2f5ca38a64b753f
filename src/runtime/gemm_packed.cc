// Linear layers through oneDNN's matmul primitive (C++ API), part of the GEMM
// door (runtime/gemm.h). The weights are reordered once into the layout a
// reference primitive asks for; bias and a residual add run as the
// primitive's post-ops, and GELU too where the output is bf16 (or a residual
// follows it). An f32 output's GELU is ours instead (gelu.h), on each block
// of kGeluRows rows right after its product, while the block is in L2:
// oneDNN 2.6's gelu_erf post-op cost 8% of the FFN's first product on a
// Zen 4, ours about half that (docs/DECISIONS.md). For a bf16 output the
// same pass (f32 block, GELU, rounding into y) made the bf16 model's ffn_in
// 2% slower (64-row products with their x conversion each), so it is not.
// oneDNN 2.6's bf16 matmul needs src and weights both bf16, so an f32 x is
// reordered f32 -> bf16 per call there (a bf16 x, from a stage that already
// writes bf16, goes in as it is). Primitives exist per M (brgemm, the kernel
// that reaches the FMA / AMX peak, has no runtime dimensions in 2.6; see
// docs/DECISIONS.md) and are kept in a small LRU cache.
//
// Threads: the rows are cut into one piece per pool thread (blocks of
// kGeluRows where our GELU follows) and each piece is one single-threaded
// call. Letting the library split a whole call over its OpenMP threads
// instead was as fast for the product alone, but its threads then spin
// (libgomp's default wait) while our pool runs the next stage on the same
// cores: the embed benchmark ran 5-7% slower that way, attention alone 12%.
#include <algorithm>
#include <list>
#include <map>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "runtime/gelu.h"
#include "runtime/gemm.h"
#include "runtime/gemm_onednn.h"

namespace tessera {

using gemm_detail::cpu_engine;
using gemm_detail::cut;
using gemm_detail::from_error;
using gemm_detail::Pieces;
using gemm_detail::round_up;
using gemm_detail::shape_text;

namespace {

using dnnl::memory;
using Dt = memory::data_type;
using Tag = memory::format_tag;

// The M the weight layout is chosen for; the per-M primitives are asked for
// that layout (ONEDNN_VERBOSE: brgemm took it for every M from 1 to 8192).
constexpr int64_t kLayoutRows = 512;
// Shapes kept (each: a matmul primitive, and a reorder for bf16).
constexpr size_t kCacheShapes = 256;
// Rows per product where our GELU follows it: 64 x N f32 (384 KiB at the
// FFN's N = 1536) stays in L2 for the pass.
constexpr int64_t kGeluRows = 64;

// Whether linear() applies GELU itself (gelu_in_place on f32 output blocks)
// rather than as oneDNN's post-op, and how it then cuts the rows: blocks of
// kGeluRows, taken by the pool's threads in turn.
bool own_gelu(const LinearEpilogue& e, LinearTypes t) {
  return e.gelu && !e.accumulate && t.y == DType::kF32;
}
Pieces pieces_for(int64_t m, int threads, const LinearEpilogue& e, LinearTypes t) {
  if (!own_gelu(e, t) || m <= 0) return cut(m, threads);
  return Pieces{kGeluRows, (m + kGeluRows - 1) / kGeluRows};
}
LinearEpilogue product_epilogue(LinearEpilogue e, LinearTypes t) {
  if (own_gelu(e, t)) e.gelu = false;
  return e;
}

Dt data_type(WeightType t) {
  return t == WeightType::kBf16 ? Dt::bf16 : t == WeightType::kInt8 ? Dt::s8 : Dt::f32;
}
Dt data_type(DType t) { return t == DType::kBF16 ? Dt::bf16 : Dt::f32; }
const char* type_name(WeightType t) {
  return t == WeightType::kBf16 ? "bf16" : t == WeightType::kInt8 ? "int8" : "f32";
}

// W [n, k] row-major seen as the matmul's weights [k, n] (strides {1, k}).
memory::desc plain_weights(int64_t n, int64_t k, Dt dt) {
  return memory::desc({k, n}, dt, memory::dims{1, k});
}

memory::desc bias_desc(int64_t n) { return memory::desc({1, n}, Dt::f32, Tag::ab); }

dnnl::primitive_attr attributes(const LinearEpilogue& e) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::post_ops ops;
  // oneDNN applies the bias first, then the post-ops in order.
  if (e.gelu) {
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
  }
  if (e.accumulate) {
    ops.append_sum(1.0f);
  }
  attr.set_post_ops(ops);
  return attr;
}

dnnl::matmul::primitive_desc matmul_pd(int64_t m, Dt src_type, const memory::desc& weights,
                                       int64_t n, int64_t k, const LinearEpilogue& e,
                                       Dt dst_type = Dt::f32) {
  const memory::desc src({m, k}, src_type, Tag::ab);
  const memory::desc dst({m, n}, dst_type, Tag::ab);
  const auto desc = e.bias ? dnnl::matmul::desc(src, weights, bias_desc(n), dst)
                           : dnnl::matmul::desc(src, weights, dst);
  return dnnl::matmul::primitive_desc(desc, attributes(e), cpu_engine());
}

// The weight layout oneDNN's matmul asks for with W [n, k], and the kernel it
// picks ("ref:any": its reference loops). Unsupported for bf16 where it has no
// bf16 matmul at all (CPUs without AVX-512).
Status preferred_layout(int64_t n, int64_t k, WeightType type, memory::desc* layout,
                        std::string* kernel) {
  const Dt dt = data_type(type);
  try {
    const auto pd =
        matmul_pd(kLayoutRows, dt, memory::desc({k, n}, dt, Tag::any), n, k, LinearEpilogue{});
    *layout = pd.weights_desc();
    *kernel = pd.impl_info_str();
  } catch (const dnnl::error& e) {
    if (e.status == dnnl_unimplemented && type == WeightType::kBf16) {
      return unsupported(
          "bf16 weights: oneDNN has no bf16 matrix kernel for this CPU; bf16 needs "
          "AVX-512, and is fast with AVX512_BF16 or AMX (CPU kind " +
          cpu_kind_description() + ")");
    }
    return from_error(e, std::string(type_name(type)) + " matmul set-up", kLayoutRows, n, k);
  }
  return Status::Ok();
}

// Runs one reorder between two memories with a tracked scratchpad.
Status run_reorder(memory& from, memory& to, TrackingAllocator& alloc) {
  const dnnl::reorder::primitive_desc pd(cpu_engine(), from.get_desc(), cpu_engine(), to.get_desc(),
                                         attributes(LinearEpilogue{}));
  Buffer scratch;
  TESSERA_RETURN_IF_ERROR(
      Buffer::allocate(alloc, pd.scratchpad_desc().get_size(), "gemm.packed.scratchpad", &scratch));
  dnnl::stream stream(cpu_engine());
  dnnl::reorder(pd).execute(
      stream, {{DNNL_ARG_FROM, from},
               {DNNL_ARG_TO, to},
               {DNNL_ARG_SCRATCHPAD, memory(pd.scratchpad_desc(), cpu_engine(), scratch.data())}});
  stream.wait();
  return Status::Ok();
}

}  // namespace

// One piece shape's primitives: (bf16) x f32 -> bf16, then the product.
struct PackedWeights::Plan {
  bool convert_x = false;
  dnnl::reorder convert;
  dnnl::matmul product;
  memory::desc x, x_bf16, y;
  // The reorder and the product run one after the other: one scratchpad.
  memory::desc scratch;
  size_t workspace() const {
    return (convert_x ? round_up(x_bf16.get_size()) : 0) + round_up(scratch.get_size());
  }
};

namespace {

using Plan = PackedWeights::Plan;
// m, n, k, weight type, bias, gelu, accumulate, x type, y type
using PlanKey = std::tuple<int64_t, int64_t, int64_t, int, bool, bool, bool, int, int>;

Status build_plan(const PlanKey& key, const memory::desc& weights, Plan* plan) {
  const auto [m, n, k, type, bias, gelu, accumulate, x_type, y_type] = key;
  LinearEpilogue e;
  static const float kAnyBias = 0.0f;  // only its presence shapes the primitive
  e.bias = bias ? &kAnyBias : nullptr;
  e.gelu = gelu;
  e.accumulate = accumulate;
  const bool bf16 = static_cast<WeightType>(type) == WeightType::kBf16;
  try {
    const Dt x_dt = data_type(static_cast<DType>(x_type));
    plan->x = memory::desc({m, k}, x_dt, Tag::ab);
    const auto pd = matmul_pd(m, bf16 ? Dt::bf16 : Dt::f32, weights, n, k, e,
                              data_type(static_cast<DType>(y_type)));
    plan->product = dnnl::matmul(pd);
    plan->y = pd.dst_desc();
    plan->scratch = pd.scratchpad_desc();
    if (bf16 && x_dt == Dt::f32) {
      plan->convert_x = true;
      plan->x_bf16 = pd.src_desc();
      const dnnl::reorder::primitive_desc convert(cpu_engine(), plan->x, cpu_engine(), plan->x_bf16,
                                                  attributes(LinearEpilogue{}));
      plan->convert = dnnl::reorder(convert);
      if (convert.scratchpad_desc().get_size() > plan->scratch.get_size()) {
        plan->scratch = convert.scratchpad_desc();
      }
    }
  } catch (const dnnl::error& err) {
    return from_error(err, std::string(bf16 ? "bf16" : "f32") + " matmul set-up", m, n, k);
  }
  return Status::Ok();
}

// Least-recently-used plans; oneDNN's own primitive cache sits below this
// one, so a plan dropped here is rebuilt cheaply while oneDNN still has it.
class PlanCache {
 public:
  Status get(const PlanKey& key, const memory::desc& weights, std::shared_ptr<const Plan>* out) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = index_.find(key); it != index_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      *out = it->second->second;
      return Status::Ok();
    }
    auto plan = std::make_shared<Plan>();
    TESSERA_RETURN_IF_ERROR(build_plan(key, weights, plan.get()));
    order_.emplace_front(key, plan);
    index_[key] = order_.begin();
    if (order_.size() > kCacheShapes) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    *out = std::move(plan);
    return Status::Ok();
  }

 private:
  using Entry = std::pair<PlanKey, std::shared_ptr<const Plan>>;
  std::mutex mu_;
  std::list<Entry> order_;
  std::map<PlanKey, std::list<Entry>::iterator> index_;
};

PlanCache& plan_cache() {
  static PlanCache* c = new PlanCache();
  return *c;
}

}  // namespace

// linear()'s access to the weights' layout and the plan cache.
class LinearPlanner {
 public:
  static Status plan(const PackedWeights& w, int64_t m, const LinearEpilogue& e, LinearTypes t,
                     std::shared_ptr<const Plan>* out) {
    return plan_cache().get({m, w.n_, w.k_, static_cast<int>(w.type_), e.bias != nullptr, e.gelu,
                             e.accumulate, static_cast<int>(t.x), static_cast<int>(t.y)},
                            w.layout_->desc, out);
  }
  static memory weights(const PackedWeights& w) {
    return memory(w.layout_->desc, cpu_engine(), const_cast<void*>(w.data_.data()));
  }
  // The plans of a full piece and of the last one (the same when the pieces
  // are equal), and the workspace of one thread: the larger of the two.
  struct PiecePlans {
    std::shared_ptr<const Plan> full, last;
    size_t slot_bytes = 0;
  };
  static Status piece_plans(const PackedWeights& w, const Pieces& p, int64_t m,
                            const LinearEpilogue& e, LinearTypes t, PiecePlans* out) {
    const LinearEpilogue product = product_epilogue(e, t);
    TESSERA_RETURN_IF_ERROR(plan(w, p.rows, product, t, &out->full));
    TESSERA_RETURN_IF_ERROR(plan(w, m - (p.count - 1) * p.rows, product, t, &out->last));
    out->slot_bytes = std::max(out->full->workspace(), out->last->workspace());
    return Status::Ok();
  }
};

PackedWeights::PackedWeights() = default;
PackedWeights::PackedWeights(PackedWeights&&) noexcept = default;
PackedWeights& PackedWeights::operator=(PackedWeights&&) noexcept = default;
PackedWeights::~PackedWeights() = default;

Status PackedWeights::create(const float* w, int64_t n, int64_t k, WeightType type,
                             TrackingAllocator& alloc, std::string_view owner, PackedWeights* out) {
  if (n < 1 || k < 1) {
    return invalid_argument(std::string(type_name(type)) + " weights: shape [" + std::to_string(n) +
                            ", " + std::to_string(k) + "] must be positive");
  }
  if (type == WeightType::kInt8) {
    return Int8Linear::create(w, n, k, alloc, owner, out);
  }
  PackedWeights result;
  memory::desc layout;
  std::string kernel;
  TESSERA_RETURN_IF_ERROR(preferred_layout(n, k, type, &layout, &kernel));
  if (type == WeightType::kBf16 && kernel.rfind("ref", 0) == 0) {
    return unsupported("bf16 weights: oneDNN has no bf16 matrix kernel for this CPU (only '" +
                       kernel +
                       "'); bf16 needs AVX-512, and is fast with AVX512_BF16 or AMX (CPU kind " +
                       cpu_kind_description() + ")");
  }
  try {
    result.layout_ = std::make_unique<Layout>(Layout{layout});
    TESSERA_RETURN_IF_ERROR(
        Buffer::allocate(alloc, result.layout_->desc.get_size(), owner, &result.data_));
    memory src(plain_weights(n, k, Dt::f32), cpu_engine(), const_cast<float*>(w));
    memory dst(result.layout_->desc, cpu_engine(), result.data_.data());
    TESSERA_RETURN_IF_ERROR(run_reorder(src, dst, alloc));
  } catch (const dnnl::error& e) {
    return from_error(e, std::string(type_name(type)) + " weight conversion", kLayoutRows, n, k);
  }
  result.n_ = n;
  result.k_ = k;
  result.type_ = type;
  *out = std::move(result);
  return Status::Ok();
}

Status PackedWeights::unpack(float* w) const {
  if (empty()) {
    return invalid_argument("PackedWeights::unpack: empty weights");
  }
  if (type_ == WeightType::kInt8) {
    return Int8Linear::unpack(*this, w);
  }
  TrackingAllocator scratch_owner;  // the reorder's scratchpad, freed before return
  try {
    memory src(layout_->desc, cpu_engine(), const_cast<void*>(data_.data()));
    memory dst(plain_weights(n_, k_, Dt::f32), cpu_engine(), w);
    TESSERA_RETURN_IF_ERROR(run_reorder(src, dst, scratch_owner));
  } catch (const dnnl::error& e) {
    return from_error(e, "weight unpacking", kLayoutRows, n_, k_);
  }
  return Status::Ok();
}

namespace {

Status check_shape(int64_t m, const PackedWeights& w, LinearTypes t) {
  if (w.empty()) {
    return invalid_argument("linear: empty weights");
  }
  if (m < 0) {
    return invalid_argument("linear: M = " + std::to_string(m) + " is negative");
  }
  for (const auto& [name, type] : {std::pair{"x", t.x}, std::pair{"y", t.y}}) {
    if (type != DType::kF32 && type != DType::kBF16) {
      return invalid_argument(std::string("linear: ") + name + " is " +
                              std::string(dtype_name(type)) + "; activations are f32 or bf16");
    }
    if (type == DType::kBF16 && w.type() == WeightType::kF32) {
      return invalid_argument(std::string("linear: ") + name +
                              " is bf16 but the weights are f32; bf16 activations need bf16 "
                              "or int8 weights");
    }
  }
  return Status::Ok();
}

}  // namespace

Status linear_workspace_bytes(int threads, int64_t m, const PackedWeights& w,
                              const LinearEpilogue& epilogue, size_t* out, LinearTypes types) {
  TESSERA_RETURN_IF_ERROR(check_shape(m, w, types));
  if (w.type() == WeightType::kInt8) {
    return Int8Linear::workspace_bytes(threads, m, w, out);
  }
  const Pieces p = pieces_for(m, threads, epilogue, types);
  if (p.count == 0) {
    *out = 0;
    return Status::Ok();
  }
  LinearPlanner::PiecePlans plans;
  TESSERA_RETURN_IF_ERROR(LinearPlanner::piece_plans(w, p, m, epilogue, types, &plans));
  *out = plans.slot_bytes * static_cast<size_t>(std::max(1, threads));
  return Status::Ok();
}

Status linear(ThreadPool& pool, int64_t m, const float* x, const PackedWeights& w,
              const LinearEpilogue& epilogue, float* y, void* workspace, size_t workspace_bytes) {
  return linear(pool, m, LinearTypes{}, x, w, epilogue, y, workspace, workspace_bytes);
}

Status linear(ThreadPool& pool, int64_t m, LinearTypes types, const void* x, const PackedWeights& w,
              const LinearEpilogue& epilogue, void* y, void* workspace, size_t workspace_bytes) {
  TESSERA_RETURN_IF_ERROR(check_shape(m, w, types));
  if (m == 0) {
    return Status::Ok();
  }
  if (w.type() == WeightType::kInt8) {
    return Int8Linear::run(pool, m, types, x, w, epilogue, y, workspace, workspace_bytes);
  }
  const int threads = pool.num_threads();
  const Pieces p = pieces_for(m, threads, epilogue, types);
  const bool gelu_after = own_gelu(epilogue, types);
  // Every plan is made (and the workspace checked) before any row is written.
  LinearPlanner::PiecePlans plans;
  TESSERA_RETURN_IF_ERROR(LinearPlanner::piece_plans(w, p, m, epilogue, types, &plans));
  const size_t slot = plans.slot_bytes;
  if (workspace_bytes < slot * static_cast<size_t>(threads)) {
    return invalid_argument("linear: workspace of " + std::to_string(workspace_bytes) + " bytes; " +
                            shape_text(m, w.n(), w.k()) + " on " + std::to_string(threads) +
                            " threads needs " + std::to_string(slot * threads));
  }
  const auto x_row = static_cast<int64_t>(dtype_size(types.x)) * w.k();
  const auto y_row = static_cast<int64_t>(dtype_size(types.y)) * w.n();
  std::vector<Status> results(static_cast<size_t>(p.count));
  pool.parallel_for(p.count, [&](int64_t piece, int thread) {
    const int64_t r0 = piece * p.rows, rows = std::min(p.rows, m - r0);
    const Plan* plan = piece + 1 == p.count ? plans.last.get() : plans.full.get();
    Status& st = results[static_cast<size_t>(piece)];
    const ScopedGemmThreads one_thread(1);
    char* base = static_cast<char*>(workspace) + slot * static_cast<size_t>(thread);
    try {
      dnnl::engine& eng = cpu_engine();
      memory x_in(plan->x, eng, const_cast<char*>(static_cast<const char*>(x) + r0 * x_row));
      memory out(plan->y, eng, static_cast<char*>(y) + r0 * y_row);
      memory scratch(plan->scratch, eng,
                     base + (plan->convert_x ? round_up(plan->x_bf16.get_size()) : 0));
      memory weights = LinearPlanner::weights(w);
      dnnl::stream stream(eng);
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, x_in},
                                           {DNNL_ARG_WEIGHTS, weights},
                                           {DNNL_ARG_DST, out},
                                           {DNNL_ARG_SCRATCHPAD, scratch}};
      if (epilogue.bias) {
        args[DNNL_ARG_BIAS] = memory(bias_desc(w.n()), eng, const_cast<float*>(epilogue.bias));
      }
      if (plan->convert_x) {
        memory x_bf16(plan->x_bf16, eng, base);
        plan->convert.execute(
            stream, {{DNNL_ARG_FROM, x_in}, {DNNL_ARG_TO, x_bf16}, {DNNL_ARG_SCRATCHPAD, scratch}});
        args[DNNL_ARG_SRC] = x_bf16;
      }
      plan->product.execute(stream, args);
      stream.wait();
      if (gelu_after) gelu_in_place(static_cast<float*>(y) + r0 * w.n(), rows * w.n());
    } catch (const dnnl::error& e) {
      st = from_error(e, std::string(type_name(w.type())) + " matmul", rows, w.n(), w.k());
    }
  });
  for (const Status& st : results) {
    TESSERA_RETURN_IF_ERROR(st);
  }
  return Status::Ok();
}

std::string linear_kernel(WeightType type, LinearTypes types) {
  if (type == WeightType::kInt8) {
    return Int8Linear::kernel();  // bf16 activations are converted around it
  }
  memory::desc layout;
  std::string kernel;
  if (!preferred_layout(kLayoutRows, kLayoutRows, type, &layout, &kernel).ok()) {
    return "none";
  }
  if (types.x == DType::kF32 && types.y == DType::kF32) {
    return kernel;
  }
  // The product proper: an f32 x is converted to the weights' type first.
  const Dt src = types.x == DType::kF32 ? data_type(type) : data_type(types.x);
  try {
    return matmul_pd(kLayoutRows, src, layout, kLayoutRows, kLayoutRows, LinearEpilogue{},
                     data_type(types.y))
        .impl_info_str();
  } catch (const dnnl::error&) {
    return "none";
  }
}

}  // namespace tessera
