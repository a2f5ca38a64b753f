// The case grid, in sections. Costs are kept in check by pairing the long
// lengths (1000, 1023) with few heads and small head dims.
#include "verify/grid.h"

#include <functional>

namespace tessera::verify {

namespace {

struct Shape {
  int64_t b, sq, sk, hq, hkv, d;
};

AttentionCase make(const Shape& s, DType dtype, Mask mask = Mask::none()) {
  AttentionCase c;
  c.batch = s.b;
  c.sq = s.sq;
  c.sk = s.sk;
  c.hq = s.hq;
  c.hkv = s.hkv;
  c.d = c.dv = s.d;
  c.dtype = dtype;
  c.mask = mask;
  return c;
}

AttentionCase make_varlen(std::vector<int32_t> q_lens, std::vector<int32_t> k_lens, int64_t hq,
                          int64_t hkv, int64_t d, DType dtype, Mask mask) {
  AttentionCase c = make({1, 1, 1, hq, hkv, d}, dtype, mask);
  c.set_varlen(std::move(q_lens), std::move(k_lens));
  return c;
}

DType dtype_at(size_t i) { return kDTypes[i % std::size(kDTypes)]; }

// Seeds come from names, so a case keeps its data when the grid changes.
std::vector<AttentionCase> seeded(std::vector<AttentionCase> cases) {
  for (AttentionCase& c : cases) c.seed = stable_hash(c.name());
  return cases;
}

// 1. Every head dim in every dtype, MHA, no mask, odd lengths.
void add_head_dims(std::vector<AttentionCase>& g) {
  const Shape shapes[] = {{1, 1000, 1023, 2, 2, 16}, {3, 113, 129, 2, 2, 32},
                          {1, 129, 113, 2, 2, 40},   {3, 7, 64, 2, 2, 59},
                          {1, 64, 1023, 2, 2, 64},   {3, 113, 7, 2, 2, 80},
                          {1, 1, 1000, 2, 2, 96},    {3, 129, 129, 2, 2, 111},
                          {1, 1023, 64, 2, 2, 128},  {3, 113, 113, 2, 2, 256}};
  for (const Shape& s : shapes) {
    for (DType t : kDTypes) g.push_back(make(s, t));
  }
}

// 2. Every (Sq, Sk) pair: causal (bottom-right aligned, rows with no key when
//    Sq > Sk) with MHA, and no mask with MQA.
void add_lengths(std::vector<AttentionCase>& g) {
  size_t i = 0;
  for (int64_t sq : kSeqLens) {
    for (int64_t sk : kSeqLens) {
      g.push_back(make({1, sq, sk, 2, 2, 32}, dtype_at(i), Mask::causal()));
      const int64_t b = sq * sk <= int64_t{129} * 129 ? 3 : 1;
      g.push_back(make({b, sq, sk, 2, 1, 59}, dtype_at(i + 1)));
      ++i;
    }
  }
}

// 3. Sliding windows, bounded and unbounded on either side.
void add_windows(std::vector<AttentionCase>& g) {
  const Mask windows[] = {Mask::window(0, 0),  Mask::window(7, 7),  Mask::window(16, 0),
                          Mask::window(-1, 3), Mask::window(5, -1), Mask::window(100, 20)};
  const Shape shapes[] = {
      {1, 113, 129, 2, 2, 64}, {3, 129, 113, 4, 1, 32}, {1, 1023, 1000, 1, 1, 16}};
  size_t i = 0;
  for (const Mask& w : windows) {
    for (const Shape& s : shapes) g.push_back(make(s, dtype_at(i++), w));
  }
}

// 4. Each feature crossed with five odd shapes, three masks and the dtypes.
void add_features(std::vector<AttentionCase>& g) {
  const Shape shapes[] = {{1, 113, 129, 2, 2, 59},
                          {3, 7, 64, 2, 2, 111},
                          {1, 129, 113, 2, 2, 40},
                          {3, 64, 64, 2, 2, 80},
                          {1, 1000, 1023, 2, 2, 16}};
  const Mask masks[] = {Mask::none(), Mask::causal(), Mask::window(16, 0)};
  const std::function<void(AttentionCase&)> features[] = {
      [](AttentionCase& c) { c.bias = BiasKind::kFull; },
      [](AttentionCase& c) { c.bias = BiasKind::kBroadcast; },
      [](AttentionCase& c) { c.softcap = 1.5f; },
      [](AttentionCase& c) { c.scale = 0.5f; },  // sharper softmax than 1/sqrt(D)
      [](AttentionCase& c) { c.lse = true; },
      [](AttentionCase& c) { c.layout = Layout::kBSHDPadded; },
      [](AttentionCase& c) { c.layout = Layout::kBHSD; },
      [](AttentionCase& c) { c.dv = (2 * c.d + 1) / 3; },  // Dv != D, odd
      [](AttentionCase& c) { c.hq = 6, c.hkv = 2; },       // GQA
      [](AttentionCase& c) { c.hq = 4, c.hkv = 1; },       // MQA
  };
  for (size_t f = 0; f < std::size(features); ++f) {
    for (size_t s = 0; s < std::size(shapes); ++s) {
      AttentionCase c = make(shapes[s], dtype_at(f + s), masks[(f + s) % std::size(masks)]);
      features[f](c);
      g.push_back(c);
    }
  }
}

// 5. Varlen (packed) batches, with empty sequences and decode-like rows.
void add_varlen(std::vector<AttentionCase>& g) {
  const struct {
    std::vector<int32_t> q, k;
    int64_t d;
  } sets[] = {{{113, 7, 64}, {113, 7, 64}, 64},
              {{1, 129, 7}, {64, 113, 7}, 59},
              {{7, 0, 59}, {7, 5, 0}, 128},  // an empty query and an empty key sequence
              {{1000}, {1023}, 16},
              {{129, 1, 1}, {1, 129, 1023}, 96}};
  const Mask masks[] = {Mask::none(), Mask::causal(), Mask::window(16, 0)};
  size_t i = 0;
  for (const auto& set : sets) {
    for (const Mask& mask : masks) {
      AttentionCase c = make_varlen(set.q, set.k, 2, 2, set.d, dtype_at(i), mask);
      switch (i++ % 3) {
        case 0:
          c.lse = true, c.layout = Layout::kBHSD;
          break;
        case 1:
          c.bias = BiasKind::kFull, c.hq = 4;
          break;
        default:
          c.softcap = 2.0f, c.lse = true, c.layout = Layout::kBSHDPadded;
          break;
      }
      g.push_back(c);
    }
  }
}

// Empty tensors: no batch (nothing to write), no query rows, no keys (every
// row sees none: zeros, lse -inf). cpu.flash once divided by zero on B = 0, a
// crash found through the Python API.
void add_empty(std::vector<AttentionCase>& g) {
  for (DType t : kDTypes) g.push_back(make({0, 7, 9, 2, 2, 16}, t, Mask::none()));
  AttentionCase no_queries = make({2, 0, 9, 4, 2, 32}, DType::kF32, Mask::causal());
  no_queries.lse = true;
  g.push_back(no_queries);
  AttentionCase no_keys = make({2, 5, 0, 4, 2, 32}, DType::kBF16, Mask::none());
  no_keys.lse = true;
  g.push_back(no_keys);
}

// 6. The exact semantics: NaN rows and rows with no visible key, with lse.
void add_semantics(std::vector<AttentionCase>& g) {
  for (DType t : kDTypes) {
    AttentionCase nan_rows = make({3, 113, 129, 2, 1, 64}, t, Mask::causal());
    nan_rows.lse = true;
    nan_rows.nan_rows = 5;
    g.push_back(nan_rows);
    AttentionCase nan_varlen = make_varlen({1, 129, 7}, {64, 113, 7}, 2, 2, 32, t, Mask::none());
    nan_varlen.lse = true;
    nan_varlen.nan_rows = 3;
    g.push_back(nan_varlen);
    AttentionCase no_key = make({1, 129, 7, 2, 2, 32}, t, Mask::causal());
    no_key.lse = true;
    g.push_back(no_key);
    AttentionCase no_key_window = make({3, 113, 7, 2, 2, 16}, t, Mask::window(0, 0));
    no_key_window.lse = true;
    g.push_back(no_key_window);
  }
  AttentionCase long_window = make({1, 1023, 64, 2, 2, 32}, DType::kF32, Mask::window(2, 0));
  long_window.lse = true;
  g.push_back(long_window);
  add_empty(g);
}

// 7. Everything at once.
void add_combined(std::vector<AttentionCase>& g) {
  for (DType t : kDTypes) {
    AttentionCase a = make({3, 113, 129, 4, 2, 59}, t, Mask::causal());
    a.bias = BiasKind::kFull;
    a.softcap = 2.0f;
    a.lse = true;
    a.layout = Layout::kBHSD;
    a.nan_rows = 1;
    g.push_back(a);
    AttentionCase b = make({1, 129, 1023, 6, 1, 111}, t, Mask::window(64, 0));
    b.dv = 64;
    b.bias = BiasKind::kBroadcast;
    b.lse = true;
    b.layout = Layout::kBSHDPadded;
    b.scale = 0.25f;
    g.push_back(b);
  }
}

}  // namespace

// 8. Decode: one query position per sequence, the case cpu.flash serves with
//    a loop of its own (a stream over every head's keys, key splits across
//    threads): GQA groups that are and are not multiples of 4, odd D and Dv,
//    every head dim class, strided layouts, masks as key ranges, many heads,
//    a NaN query, and varlen batches of single queries with empty sequences.
void add_decode(std::vector<AttentionCase>& g) {
  AttentionCase c = make({1, 1, 1000, 8, 2, 128}, DType::kF32, Mask::causal());
  c.lse = true;
  g.push_back(c);
  g.push_back(make({2, 1, 129, 6, 1, 59}, DType::kBF16, Mask::window(16, 0)));
  c = make({1, 1, 4095, 5, 5, 80}, DType::kF32, Mask::causal());
  c.dv = 37;
  g.push_back(c);
  g.push_back(make({3, 1, 64, 12, 3, 16}, DType::kBF16, Mask::window(7, 7)));
  c = make({1, 1, 2048, 4, 2, 64}, DType::kF32);
  c.layout = Layout::kBHSD;
  g.push_back(c);
  c = make({1, 1, 513, 2, 1, 256}, DType::kBF16);
  c.lse = true;
  g.push_back(c);
  g.push_back(make({1, 1, 257, 64, 8, 128}, DType::kF32));
  c = make({1, 1, 300, 4, 1, 64}, DType::kF32);
  c.nan_rows = 1;
  c.lse = true;
  g.push_back(c);
  c = make({2, 1, 77, 3, 3, 40}, DType::kF32, Mask::window(-1, 3));
  c.scale = 0.5f;
  g.push_back(c);
  c = make({1, 1, 1000, 4, 4, 96}, DType::kBF16);
  c.layout = Layout::kBSHDPadded;
  g.push_back(c);
  c = make_varlen({1, 1, 0, 1}, {1000, 0, 7, 33}, 8, 2, 64, DType::kBF16, Mask::window(64, 0));
  c.lse = true;
  g.push_back(c);
}

std::vector<AttentionCase> full_grid() {
  std::vector<AttentionCase> g;
  add_head_dims(g);
  add_lengths(g);
  add_windows(g);
  add_features(g);
  add_varlen(g);
  add_semantics(g);
  add_combined(g);
  add_decode(g);
  return seeded(std::move(g));
}

std::vector<AttentionCase> quick_grid() {
  std::vector<AttentionCase> g;
  g.push_back(make({1, 7, 7, 2, 2, 16}, DType::kF32));
  g.push_back(make({0, 7, 9, 2, 2, 16}, DType::kF32));  // no batch
  AttentionCase c = make({3, 113, 129, 2, 2, 59}, DType::kBF16, Mask::causal());
  c.lse = true;
  g.push_back(c);
  c = make({1, 129, 113, 4, 2, 40}, DType::kF16, Mask::causal());  // rows with no key
  c.lse = true;
  g.push_back(c);
  c = make({3, 64, 64, 4, 1, 80}, DType::kF32, Mask::window(16, 0));
  c.bias = BiasKind::kFull;
  g.push_back(c);
  c = make({1, 1, 129, 2, 2, 128}, DType::kBF16);  // decode
  c.bias = BiasKind::kBroadcast;
  g.push_back(c);
  // cpu.flash's decode loop: single-query varlen, GQA, key splits, an empty row.
  c = make_varlen({1, 1, 0}, {1000, 0, 7}, 8, 2, 64, DType::kBF16, Mask::window(64, 0));
  c.lse = true;
  g.push_back(c);
  c = make({3, 7, 64, 2, 2, 111}, DType::kF16);
  c.softcap = 1.5f;
  c.lse = true;
  c.layout = Layout::kBHSD;
  g.push_back(c);
  c = make({1, 113, 113, 2, 1, 256}, DType::kF32, Mask::causal());
  c.layout = Layout::kBSHDPadded;
  g.push_back(c);
  c = make_varlen({113, 7, 64}, {113, 7, 64}, 4, 2, 64, DType::kBF16, Mask::causal());
  c.lse = true;
  g.push_back(c);
  c = make_varlen({7, 0, 59}, {7, 5, 0}, 2, 2, 32, DType::kF16, Mask::none());
  c.lse = true;
  g.push_back(c);
  c = make({1, 64, 129, 2, 2, 96}, DType::kF32, Mask::window(7, 7));
  c.scale = 0.5f;
  g.push_back(c);
  c = make({3, 64, 64, 2, 2, 64}, DType::kBF16, Mask::causal());
  c.lse = true;
  c.nan_rows = 3;
  g.push_back(c);
  c = make({1, 1023, 1000, 1, 1, 32}, DType::kF16, Mask::causal());
  g.push_back(c);
  c = make({3, 129, 64, 6, 2, 64}, DType::kF16, Mask::causal());
  c.bias = BiasKind::kFull;
  c.softcap = 2.0f;
  c.lse = true;
  c.layout = Layout::kBHSD;
  g.push_back(c);
  c = make({1, 113, 64, 2, 2, 64}, DType::kBF16);
  c.dv = 40;
  g.push_back(c);
  c = make({1, 113, 129, 2, 2, 32}, DType::kF32, Mask::window(-1, 3));
  c.nan_rows = 2;
  c.lse = true;
  g.push_back(c);
  return seeded(std::move(g));
}

AttentionCase small_case(int64_t s, int64_t h, int64_t d, uint64_t seed) {
  AttentionCase c;
  c.sq = c.sk = s;
  c.hq = c.hkv = h;
  c.d = c.dv = d;
  c.seed = seed;
  return c;
}

std::string tune_shapes() {
  constexpr const char* kShapes[] = {"B=2,S=128,H=8,D=64", "B=2,S=512,H=8,D=64",
                                     "B=1,S=512,H=8,D=128", "B=1,Sq=1,Sk=2048,H=8,D=64"};
  std::string s;
  for (const char* dtype : {"f32", "bf16"}) {
    for (const char* mask : {"none", "causal"}) {
      for (const char* shape : kShapes) {
        s += (s.empty() ? "" : ";") + std::string(shape) + ",dtype=" + dtype + ",mask=" + mask;
      }
    }
  }
  return s;
}

std::string decode_tune_shapes() {
  constexpr const char* kHeads[] = {"B=1,Hq=32,Hkv=8", "B=1,Hq=16,Hkv=16"};
  std::string s;
  for (const char* dtype : {"f32", "bf16"}) {
    for (const char* mask : {"none", "causal"}) {
      for (int d : {64, 128}) {
        for (int sk : {512, 2048, 8192}) {
          for (const char* heads : kHeads) {
            s += (s.empty() ? "" : ";") + std::string(heads) + ",Sq=1,Sk=" + std::to_string(sk) +
                 ",D=" + std::to_string(d) + ",dtype=" + dtype + ",mask=" + mask;
          }
        }
      }
    }
  }
  return s;
}

}  // namespace tessera::verify
