// Host side of cpu.flash: turns validated AttentionArgs into FlashParams,
// choosing the work split (GQA head chunks, query blocks, decode key splits).
#include "cpu_flash/flash_params.h"

#include <algorithm>

#include "cpu_flash/product_paths.h"

namespace tessera::cpu_flash {

namespace {

// Work items per thread below which the keys are split (decode): enough
// items that dynamic scheduling evens out the tail.
constexpr int64_t kItemsPerThread = 4;
// A key split covers at least this many tiles, so the log-sum-exp merge
// (one pass over rows x Dv) stays small next to the split's work.
constexpr int64_t kMinTilesPerSplit = 4;
// Multiply-adds (B * Hq * Sq * Sk * (D + Dv), masks ignored) below which the
// whole problem runs on the calling thread. A parallel_for costs ~1 us when
// the workers are polling and far more when one is descheduled on a busy
// host, while a second thread saves at most half the work, and work under
// 2^16 multiply-adds takes 3-6 us on one core (docs/DECISIONS.md, "cpu.flash
// runs small problems on the calling thread").
constexpr double kInlineMacs = 65536.0;
// Bytes of q, k, v and out together at or below which the tile loop issues
// no prefetches (FlashParams::prefetch): a quarter of kL2Bytes, so a
// problem this small sits in L2 (or L1) when it is called again or was just
// written by the step before. B=1, H=8, S=16, D=64 f32 (128 KiB): the
// prefetch loops were 14% of the kernel's time (perf, issue 37); the S1-S5
// shapes are 10-500 MiB and keep them.
constexpr double kPrefetchMaxBytes = static_cast<double>(kL2Bytes) / 4;

std::array<int64_t, 4> strides4(const TensorView& t) {
  return {t.strides[0], t.strides[1], t.strides[2], t.strides[3]};
}

// Whether every sequence has at most one query position (varlen: read from
// cu_seqlens_q, B + 1 host integers).
bool one_query_per_sequence(const FlashParams& p) {
  if (p.cu_q == nullptr) return p.sq <= 1;
  for (int64_t b = 0; b < p.batch; ++b) {
    if (p.cu_q[b + 1] - p.cu_q[b] > 1) return false;
  }
  return true;
}

// The problems the decode loop (decode-inl.h) can take, whatever the path:
// one query position per sequence, f32 or bf16 inputs, unit-stride K/V
// rows, no bias and no softcap (those take the tile loop), and every head's
// scratch in half of L2.
bool decode_shape(const FlashParams& p) {
  return (p.dtype == DType::kF32 || p.dtype == DType::kBF16) && p.ks[3] == 1 && p.vs[3] == 1 &&
         p.bias == nullptr && p.softcap == 0.0f && one_query_per_sequence(p) &&
         decode_layout(p.hq, p.d, p.dv).total * 4 <= kL2Bytes / 2;
}

// The decode form serves those problems on the f32-products path (f32 and
// bf16 inputs) and on the bf16dot path (bf16 inputs, both products on the
// bf16 dot product); amx takes the tile loop.
bool use_decode_form(const FlashParams& p) {
  const bool path =
      p.products == Products::kF32 || (p.products == Products::kBf16Dot && p.dtype == DType::kBF16);
  return path && decode_shape(p);
}

}  // namespace

void make_params(const AttentionArgs& args, int threads, FlashParams* p,
                 std::optional<Products> forced) {
  const AttentionDims dims = dims_of(args);
  *p = FlashParams{};
  p->q = args.q.data;
  p->k = args.k.data;
  p->v = args.v.data;
  p->out = args.out.data;
  p->dtype = args.q.dtype;
  p->qs = strides4(args.q);
  p->ks = strides4(args.k);
  p->vs = strides4(args.v);
  p->os = strides4(args.out);
  if (args.lse.present()) {
    p->lse = static_cast<float*>(args.lse.data);
    p->ls = {args.lse.strides[0], args.lse.strides[1], args.lse.strides[2]};
  }
  if (args.bias.present()) {
    p->bias = static_cast<const float*>(args.bias.data);
    for (int i = 0; i < 4; ++i) p->bs[i] = args.bias.shape[i] == 1 ? 0 : args.bias.strides[i];
    int64_t extent = 0;
    bool non_negative = true;
    for (int i = 1; i < 4; ++i) {
      non_negative = non_negative && p->bs[i] >= 0;
      extent += (args.bias.shape[i] - 1) * p->bs[i];
    }
    p->bias_index32 = non_negative && extent < (int64_t{1} << 31) - 1;
  }
  p->batch = dims.batch;
  p->hq = dims.hq;
  p->hkv = dims.hkv;
  p->group = dims.hq / dims.hkv;
  p->d = dims.d;
  p->dv = dims.dv;
  p->sq = dims.sq;
  p->sk = dims.sk;
  if (args.varlen) {
    p->cu_q = args.varlen->cu_seqlens_q;
    p->cu_k = args.varlen->cu_seqlens_k;
  }
  p->mask = args.mask;
  p->scale = args.effective_scale();
  p->softcap = args.softcap;
  // A forced path that does not apply would read past D's pairs or tiles,
  // one this CPU lacks would fault: the variants' check() refuses both, and
  // this keeps it so for direct callers (they get the default path).
  const bool force = forced && path_applies(*forced, p->dtype, p->d) && path_available(*forced);
  // The form decides which ranking of the table applies: decode where the
  // problem has the decode loop's shape.
  const ProblemForm form = decode_shape(*p) ? ProblemForm::kDecode : ProblemForm::kTiles;
  p->products = force ? *forced : product_path_for(p->dtype, p->d, form);
  // In double: varlen maxima times every head can pass 2^63.
  const double macs = static_cast<double>(p->batch) * static_cast<double>(p->hq) *
                      static_cast<double>(p->sq) * static_cast<double>(p->sk) *
                      static_cast<double>(p->d + p->dv);
  // In double, as macs.
  const double elements =
      static_cast<double>(p->batch) *
      (static_cast<double>(p->sq) * static_cast<double>(p->hq) * static_cast<double>(p->d + p->dv) +
       static_cast<double>(p->sk) * static_cast<double>(p->hkv) *
           static_cast<double>(p->d + p->dv));
  p->prefetch = elements * static_cast<double>(dtype_size(p->dtype)) > kPrefetchMaxBytes;
  if (threads > 1 && macs < kInlineMacs) {
    p->inline_run = true;
    threads = 1;  // the tiling and splits below as for one thread
  }
  p->next_unit_ahead = threads;

  const int64_t target = kItemsPerThread * threads;
  const int64_t key_tiles = (p->sk + kBlockKeys - 1) / kBlockKeys;
  if (use_decode_form(*p)) {
    p->decode = true;
    // Items are (sequence, key split): split the keys until every thread
    // has kItemsPerThread items, keeping kMinTilesPerSplit tiles per split.
    if (threads > 1 && p->batch > 0 && p->batch < target) {
      p->splits = std::clamp<int64_t>((target + p->batch - 1) / p->batch, 1,
                                      std::max<int64_t>(1, key_tiles / kMinTilesPerSplit));
    }
    p->thread_floats = decode_layout(p->hq, p->d, p->dv).total;
    p->partial_floats = p->splits == 1 ? 0 : partial_block_floats(p->hq, p->dv);
    return;
  }

  // Heads of a GQA group go together (each K/V tile is loaded once for all
  // of them); positions fill the rest of the kBlockRows rows.
  p->head_chunks = (p->group + kBlockRows - 1) / kBlockRows;
  p->heads_per_unit = (p->group + p->head_chunks - 1) / p->head_chunks;
  p->block_q = std::max<int64_t>(1, kBlockRows / p->heads_per_unit);
  p->block_q = std::min(p->block_q, std::max<int64_t>(1, p->sq));
  p->q_blocks = std::max<int64_t>(1, (p->sq + p->block_q - 1) / p->block_q);
  p->rows = p->heads_per_unit * p->block_q;

  // Query blocks per unit: as many as fit L2, but never so many that the
  // threads run out of units.
  const int64_t blocks = p->batch * p->hkv * p->head_chunks * p->q_blocks;
  p->sub_blocks = std::clamp<int64_t>(blocks / std::max<int64_t>(1, target), 1,
                                      sub_blocks_for(p->rows, p->d, p->dv));
  p->sub_blocks = std::min(p->sub_blocks, p->q_blocks);
  p->q_units = (p->q_blocks + p->sub_blocks - 1) / p->sub_blocks;

  // Decode (few units, long keys): split each unit's keys over the threads.
  const int64_t units = p->units();
  if (threads > 1 && units > 0 && units < target) {  // units is 0 when B is 0
    p->splits = std::clamp<int64_t>((target + units - 1) / units, 1,
                                    std::max<int64_t>(1, key_tiles / kMinTilesPerSplit));
  }

  p->thread_floats =
      scratch_layout(p->rows, p->d, p->dv, kMaxLanes, p->sub_blocks, p->products == Products::kAmx)
          .total;
  p->partial_floats = p->splits == 1 ? 0 : p->sub_blocks * partial_block_floats(p->rows, p->dv);
}

size_t workspace_bytes(const FlashParams& p, int threads) {
  const int64_t partials = p.splits == 1 ? 0 : p.units() * p.splits * p.partial_floats;
  return static_cast<size_t>(scratches(p, threads) * p.thread_floats + partials) * sizeof(float);
}

}  // namespace tessera::cpu_flash
