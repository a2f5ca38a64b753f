// bf16-weight products through oneDNN's matmul primitive (C++ API), part of
// the GEMM door (runtime/gemm.h). oneDNN 2.6's bf16 matmul needs src and
// weights both bf16, so x is reordered f32 -> bf16 per call; the weights are
// reordered once into the layout a reference primitive asks for. Primitives
// exist per M (brgemm, the AMX kernel, has no runtime dimensions in 2.6; see
// docs/DECISIONS.md) and are kept in a small LRU cache per shape; x is taken
// in blocks of kRowBlock rows.
#include <algorithm>
#include <dnnl.hpp>
#include <list>
#include <map>
#include <mutex>
#include <tuple>

#include "runtime/gemm.h"

namespace tessera {

namespace {

using dnnl::memory;
using Dt = memory::data_type;
using Tag = memory::format_tag;

// The M the weight layout is chosen for; the per-M primitives are asked for
// that layout (ONEDNN_VERBOSE: brgemm took it for every M from 1 to 8192).
constexpr int64_t kLayoutRows = 512;
// Rows of x converted and multiplied at a time: bounds the workspace (3 MiB
// for K = 1536) and the distinct M a pipeline run plans for (the block and
// each batch's tail). Measured on the encoder (bf16, 200 sequences, minimum
// of 12 runs, shared machine): 988 ms with 1024-row blocks, 1014 with 512,
// 1109 with 256, 1013 unblocked.
constexpr int64_t kRowBlock = 1024;
// Shapes kept (each: one reorder and one matmul primitive). A pipeline run
// plans M = kRowBlock and one tail per batch, times the 4 products per layer.
constexpr size_t kCacheShapes = 256;

dnnl::engine& cpu_engine() {
  static dnnl::engine* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *e;
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// W [n, k] row-major seen as the matmul's weights [k, n] (strides {1, k}).
memory::desc plain_weights(int64_t n, int64_t k, Dt dt) {
  return memory::desc({k, n}, dt, memory::dims{1, k});
}

dnnl::matmul::primitive_desc matmul_pd(int64_t m, const memory::desc& weights, int64_t n, int64_t k,
                                       int64_t ldy) {
  const memory::desc src({m, k}, Dt::bf16, Tag::ab);
  const memory::desc dst({m, n}, Dt::f32, memory::dims{ldy, 1});
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, dst), user_scratchpad(),
                                      cpu_engine());
}

std::string shape_text(int64_t m, int64_t n, int64_t k) {
  return "M = " + std::to_string(m) + ", N = " + std::to_string(n) + ", K = " + std::to_string(k);
}

Status from_error(const dnnl::error& e, const char* what, int64_t m, int64_t n, int64_t k) {
  return internal_error(std::string(what) + " failed (oneDNN: " + e.what() + ", status " +
                        std::to_string(e.status) + ") for " + shape_text(m, n, k));
}

}  // namespace

// One shape's primitives: x f32 -> bf16, then the product.
struct Bf16Weights::Plan {
  dnnl::reorder convert;
  dnnl::matmul product;
  memory::desc x_f32, x_bf16, y;
  // Both primitives use one user scratchpad (they run one after the other).
  memory::desc scratch;
};

namespace {

using Plan = Bf16Weights::Plan;
using PlanKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>;  // m, n, k, ldx, ldy

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
    auto [m, n, k, ldx, ldy] = key;
    auto plan = std::make_shared<Plan>();
    try {
      const auto pd = matmul_pd(m, weights, n, k, ldy);
      plan->x_f32 = memory::desc({m, k}, Dt::f32, memory::dims{ldx, 1});
      const dnnl::reorder::primitive_desc convert(cpu_engine(), plan->x_f32, cpu_engine(),
                                                  pd.src_desc(), user_scratchpad());
      plan->convert = dnnl::reorder(convert);
      plan->product = dnnl::matmul(pd);
      plan->x_bf16 = pd.src_desc();
      plan->y = pd.dst_desc();
      plan->scratch = convert.scratchpad_desc().get_size() > pd.scratchpad_desc().get_size()
                          ? convert.scratchpad_desc()
                          : pd.scratchpad_desc();
    } catch (const dnnl::error& e) {
      return from_error(e, "bf16 matmul set-up", m, n, k);
    }
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

// The weight layout oneDNN's bf16 matmul asks for with W [n, k], and the
// kernel it picks ("ref:any": its reference loops). Unsupported where it has
// no bf16 matmul at all (CPUs without AVX-512).
Status preferred_layout(int64_t n, int64_t k, memory::desc* layout, std::string* kernel) {
  try {
    const auto pd = matmul_pd(kLayoutRows, memory::desc({k, n}, Dt::bf16, Tag::any), n, k, n);
    *layout = pd.weights_desc();
    *kernel = pd.impl_info_str();
  } catch (const dnnl::error& e) {
    if (e.status == dnnl_unimplemented) {
      return unsupported(
          "bf16 weights: oneDNN has no bf16 matrix kernel for this CPU; bf16 needs "
          "AVX-512, and is fast with AVX512_BF16 or AMX");
    }
    return from_error(e, "bf16 matmul set-up", kLayoutRows, n, k);
  }
  return Status::Ok();
}

size_t round_up(size_t bytes) {
  constexpr size_t a = TrackingAllocator::kAlignment;
  return (bytes + a - 1) / a * a;
}

}  // namespace

struct Bf16Weights::Layout {
  memory::desc desc;
};

Bf16Weights::Bf16Weights() = default;
Bf16Weights::Bf16Weights(Bf16Weights&&) noexcept = default;
Bf16Weights& Bf16Weights::operator=(Bf16Weights&&) noexcept = default;
Bf16Weights::~Bf16Weights() = default;

Status Bf16Weights::create(const float* w, int64_t n, int64_t k, TrackingAllocator& alloc,
                           std::string_view owner, Bf16Weights* out) {
  if (n < 1 || k < 1) {
    return invalid_argument("bf16 weights: shape [" + std::to_string(n) + ", " + std::to_string(k) +
                            "] must be positive");
  }
  Bf16Weights result;
  memory::desc layout;
  std::string kernel;
  TESSERA_RETURN_IF_ERROR(preferred_layout(n, k, &layout, &kernel));
  if (kernel.rfind("ref", 0) == 0) {
    return unsupported("bf16 weights: oneDNN has no bf16 matrix kernel for this CPU (only '" +
                       kernel + "'); bf16 needs AVX-512, and is fast with AVX512_BF16 or AMX");
  }
  try {
    result.layout_ = std::make_unique<Layout>(Layout{layout});
    TESSERA_RETURN_IF_ERROR(
        Buffer::allocate(alloc, result.layout_->desc.get_size(), owner, &result.data_));
    memory src(plain_weights(n, k, Dt::f32), cpu_engine(), const_cast<float*>(w));
    memory dst(result.layout_->desc, cpu_engine(), result.data_.data());
    const dnnl::reorder::primitive_desc convert(cpu_engine(), src.get_desc(), cpu_engine(),
                                                dst.get_desc(), user_scratchpad());
    Buffer scratch;  // the reorder's scratchpad, tracked like everything else
    TESSERA_RETURN_IF_ERROR(Buffer::allocate(alloc, convert.scratchpad_desc().get_size(),
                                             "gemm.bf16.scratchpad", &scratch));
    dnnl::stream stream(cpu_engine());
    dnnl::reorder(convert).execute(
        stream,
        {{DNNL_ARG_FROM, src},
         {DNNL_ARG_TO, dst},
         {DNNL_ARG_SCRATCHPAD, memory(convert.scratchpad_desc(), cpu_engine(), scratch.data())}});
    stream.wait();
  } catch (const dnnl::error& e) {
    return from_error(e, "bf16 weight conversion", kLayoutRows, n, k);
  }
  result.n_ = n;
  result.k_ = k;
  *out = std::move(result);
  return Status::Ok();
}

namespace {

Status check_shape(int64_t m, int64_t ldx, const Bf16Weights& w, int64_t ldy) {
  if (!w.empty() && m >= 0 && ldx >= w.k() && ldy >= w.n()) return Status::Ok();
  return invalid_argument("gemm_bf16_weights: " + shape_text(m, w.n(), w.k()) +
                          ", ldx = " + std::to_string(ldx) + ", ldy = " + std::to_string(ldy) +
                          (w.empty() ? " with empty weights" : ": leading dimension too small"));
}

size_t workspace_of(const Plan& plan) {
  return round_up(plan.x_bf16.get_size()) + round_up(plan.scratch.get_size());
}

}  // namespace

Status Bf16Weights::plan(int64_t m, int64_t ldx, int64_t ldy,
                         std::shared_ptr<const Plan>* out) const {
  return plan_cache().get({m, n_, k_, ldx, ldy}, layout_->desc, out);
}

Status gemm_bf16_workspace_bytes(int64_t m, int64_t ldx, const Bf16Weights& w, int64_t ldy,
                                 size_t* out) {
  TESSERA_RETURN_IF_ERROR(check_shape(m, ldx, w, ldy));
  *out = 0;
  // The full blocks, and the last one when it is shorter.
  for (const int64_t rows : {std::min(m, kRowBlock), m > kRowBlock ? m % kRowBlock : 0}) {
    if (rows == 0) continue;
    std::shared_ptr<const Plan> plan;
    TESSERA_RETURN_IF_ERROR(w.plan(rows, ldx, ldy, &plan));
    *out = std::max(*out, workspace_of(*plan));
  }
  return Status::Ok();
}

Status gemm_bf16_weights(int64_t m, const float* x, int64_t ldx, const Bf16Weights& w, float* y,
                         int64_t ldy, void* workspace, size_t workspace_bytes) {
  TESSERA_RETURN_IF_ERROR(check_shape(m, ldx, w, ldy));
  char* base = static_cast<char*>(workspace);
  for (int64_t r0 = 0; r0 < m; r0 += kRowBlock) {
    const int64_t rows = std::min(kRowBlock, m - r0);
    std::shared_ptr<const Plan> plan;
    TESSERA_RETURN_IF_ERROR(w.plan(rows, ldx, ldy, &plan));
    if (workspace_bytes < workspace_of(*plan)) {
      return invalid_argument("gemm_bf16_weights: workspace of " + std::to_string(workspace_bytes) +
                              " bytes; " + shape_text(m, w.n(), w.k()) + " needs " +
                              std::to_string(workspace_of(*plan)));
    }
    try {
      dnnl::engine& eng = cpu_engine();
      memory x_f32(plan->x_f32, eng, const_cast<float*>(x + r0 * ldx));
      memory x_bf16(plan->x_bf16, eng, base);
      memory weights(w.layout_->desc, eng, w.data_.data());
      memory out(plan->y, eng, y + r0 * ldy);
      memory scratch(plan->scratch, eng, base + round_up(plan->x_bf16.get_size()));
      dnnl::stream stream(eng);
      plan->convert.execute(
          stream, {{DNNL_ARG_FROM, x_f32}, {DNNL_ARG_TO, x_bf16}, {DNNL_ARG_SCRATCHPAD, scratch}});
      plan->product.execute(stream, {{DNNL_ARG_SRC, x_bf16},
                                     {DNNL_ARG_WEIGHTS, weights},
                                     {DNNL_ARG_DST, out},
                                     {DNNL_ARG_SCRATCHPAD, scratch}});
      stream.wait();
    } catch (const dnnl::error& e) {
      return from_error(e, "bf16 matmul", rows, w.n(), w.k());
    }
  }
  return Status::Ok();
}

std::string bf16_gemm_kernel() {
  memory::desc layout;
  std::string kernel;
  return preferred_layout(kLayoutRows, kLayoutRows, &layout, &kernel).ok() ? kernel : "none";
}

}  // namespace tessera
