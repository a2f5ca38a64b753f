#include "model/weights.h"

#include <algorithm>
#include <memory>
#include <string>

#include "model/architectures/architecture.h"

namespace tessera::model {

namespace {

constexpr size_t kArenaAlignFloats = TrackingAllocator::kAlignment / sizeof(float);

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

// "encoder.layer.{}." with {} = l.
std::string layer_prefix(const std::string& pattern, int l) {
  std::string out = pattern;
  const size_t at = out.find("{}");
  if (at != std::string::npos) out.replace(at, 2, std::to_string(l));
  return out;
}

// One source tensor and where its f32 copy goes.
struct Piece {
  const SafeTensor* tensor;
  size_t dst_offset;  // floats from the start of the arena
};

// Plans the arena: full tensor names (prefix included) and their expected shapes.
// `name` in `file`, else its legacy LayerNorm spelling: TF-converted
// checkpoints (many BERTs, SPLADE-tiny, its MLM head included) name a norm's
// scale and shift `gamma` / `beta`, which transformers' loader renames to
// `weight` / `bias`.
const SafeTensor* find_tensor_or_legacy(const SafetensorsFile& file, const std::string& name) {
  if (const SafeTensor* t = file.find(name)) return t;
  const auto legacy = [&](std::string_view now, std::string_view old) -> const SafeTensor* {
    if (name.size() < now.size() || name.compare(name.size() - now.size(), now.size(), now) != 0) {
      return nullptr;
    }
    return file.find(name.substr(0, name.size() - now.size()) + std::string(old));
  };
  if (const SafeTensor* t = legacy(".weight", ".gamma")) return t;
  return legacy(".bias", ".beta");
}

class Planner {
 public:
  explicit Planner(const SafetensorsFile& file) : file_(file) {}

  const SafeTensor* find_with_legacy_name(const std::string& name) const {
    return find_tensor_or_legacy(file_, name);
  }

  // Reserves one arena array made of `names` stacked along dim 0, each of
  // shape `shape`; `slot` receives its offset.
  Status add(std::initializer_list<std::string> names, const std::vector<int64_t>& shape,
             const char* derived_from, size_t* slot) {
    std::vector<Part> parts;
    for (const std::string& name : names) parts.push_back({name, shape});
    return add_parts(parts, derived_from, slot);
  }

  // The same with a shape per part (Q, K and V of grouped-query attention).
  struct Part {
    std::string name;
    std::vector<int64_t> shape;
  };
  Status add_parts(const std::vector<Part>& parts, const char* derived_from, size_t* slot) {
    *slot = total_;
    size_t at = total_;
    for (const auto& [name, shape] : parts) {
      size_t per = 1;
      for (int64_t d : shape) per *= static_cast<size_t>(d);
      const SafeTensor* t = find_with_legacy_name(name);
      if (t == nullptr) {
        return not_found(file_.path() + ": missing tensor '" + name + "'");
      }
      if (t->shape != shape) {
        return invalid_argument(file_.path() + ": tensor '" + name + "' has shape " +
                                t->shape_string() + " but config.json (" + derived_from +
                                ") implies " + shape_str(shape));
      }
      if (!t->float_dtype) {
        return unsupported(file_.path() + ": tensor '" + name + "' has dtype " + t->dtype +
                           "; weights must be F32, F16 or BF16");
      }
      pieces_.push_back({t, at});
      at += per;
    }
    total_ = (at + kArenaAlignFloats - 1) / kArenaAlignFloats * kArenaAlignFloats;
    return Status::Ok();
  }

  size_t total_floats() const { return total_; }
  Status copy_into(float* arena) const {
    for (const Piece& p : pieces_) {
      TESSERA_RETURN_IF_ERROR(file_.read_f32(*p.tensor, arena + p.dst_offset));
      file_.release(*p.tensor);  // converted: its file pages need not stay resident
    }
    return Status::Ok();
  }

 private:
  const SafetensorsFile& file_;
  std::vector<Piece> pieces_;
  size_t total_ = 0;
};

// One Linear weight: its own plan, read into a temporary f32 block once the
// arena is filled and packed (PackedWeights) in the precision asked for.
struct LinearSlot {
  std::unique_ptr<Planner> staging;
  int64_t n = 0, k = 0;
  bool swap_halves = false;  // rows [a; b] stored, [b; a] wanted (WeightNames::ffn_in_up_first)
};

// One Linear weight made of parts stacked along dim 0 (same in_features).
Status add_linear_parts(const SafetensorsFile& file, const std::vector<Planner::Part>& parts,
                        const char* derived_from, LinearSlot* slot) {
  slot->n = 0;
  for (const Planner::Part& p : parts) slot->n += p.shape[0];
  slot->k = parts.front().shape[1];
  slot->staging = std::make_unique<Planner>(file);
  size_t at_zero;
  return slot->staging->add_parts(parts, derived_from, &at_zero);
}

Status add_linear(const SafetensorsFile& file, std::initializer_list<std::string> names,
                  const std::vector<int64_t>& shape, const char* derived_from, LinearSlot* slot) {
  std::vector<Planner::Part> parts;
  for (const std::string& name : names) parts.push_back({name, shape});
  return add_linear_parts(file, parts, derived_from, slot);
}

Status pack(const float* w, int64_t n, int64_t k, WeightPrecision precision,
            TrackingAllocator& allocator, PackedWeights* out) {
  const WeightType type = precision == WeightPrecision::kBf16   ? WeightType::kBf16
                          : precision == WeightPrecision::kInt8 ? WeightType::kInt8
                                                                : WeightType::kF32;
  return PackedWeights::create(w, n, k, type, allocator, "model.weights", out);
}

Status finish_linear(const LinearSlot& slot, WeightPrecision precision,
                     TrackingAllocator& allocator, PackedWeights* out) {
  Buffer staging;
  TESSERA_RETURN_IF_ERROR(Buffer::allocate(allocator, slot.staging->total_floats() * sizeof(float),
                                           "model.weights.staging", &staging));
  TESSERA_RETURN_IF_ERROR(slot.staging->copy_into(staging.as<float>()));
  if (slot.swap_halves) {
    float* rows = staging.as<float>();
    const int64_t half = slot.n / 2 * slot.k;
    std::swap_ranges(rows, rows + half, rows + half);
  }
  return pack(staging.as<float>(), slot.n, slot.k, precision, allocator, out);
}

Status find_prefix(const SafetensorsFile& file, const std::string& suffix, const char* architecture,
                   std::string* prefix) {
  for (const SafeTensor& t : file.tensors()) {
    if (t.name.size() >= suffix.size() &&
        t.name.compare(t.name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      *prefix = t.name.substr(0, t.name.size() - suffix.size());
      return Status::Ok();
    }
  }
  return not_found(file.path() + ": no tensor named '" + suffix +
                   "' (or under a prefix such as 'bert.'); not a " + architecture + " checkpoint?");
}

// A head tensor: `alternatives` ("a|b") tried under the prefix, then as
// given; the first alternative under the prefix when none exists (so the
// error names it).
std::string head_tensor(const SafetensorsFile& file, const std::string& prefix,
                        const std::string& alternatives) {
  size_t begin = 0;
  while (begin <= alternatives.size()) {
    const size_t end = std::min(alternatives.find('|', begin), alternatives.size());
    std::string name = alternatives.substr(begin, end - begin);
    if (find_tensor_or_legacy(file, prefix + name) != nullptr) return prefix + name;
    if (find_tensor_or_legacy(file, name) != nullptr) return name;
    begin = end + 1;
  }
  return prefix + alternatives.substr(0, alternatives.find('|'));
}

constexpr size_t kNone = static_cast<size_t>(-1);  // a slot the model does not have

struct LayerSlots {
  LinearSlot qkv_w, attn_out_w, ffn_in_w, ffn_out_w;
  size_t qkv_b = kNone, attn_out_b = kNone, ffn_in_b = kNone, ffn_out_b = kNone;
  size_t ln1_g = kNone, ln1_b = kNone, ln2_g = kNone, ln2_b = kNone;
  size_t q_norm = kNone, k_norm = kNone;
};

// A norm's gamma (and beta where the model's norms have one).
Status plan_norm(Planner& plan, const NetworkConfig& c, const std::string& name, int64_t h,
                 size_t* gamma, size_t* beta) {
  TESSERA_RETURN_IF_ERROR(plan.add({name + ".weight"}, {h}, "hidden_size", gamma));
  if (c.norm == NormKind::kLayerNorm && c.norm_bias) {
    TESSERA_RETURN_IF_ERROR(plan.add({name + ".bias"}, {h}, "hidden_size", beta));
  }
  return Status::Ok();
}

Status plan_layer(const SafetensorsFile& file, Planner& plan, const WeightNames& names,
                  const NetworkConfig& c, int layer, const std::string& p, LayerSlots* s) {
  const auto w = [&](const std::string& n) { return p + n + ".weight"; };
  const auto b = [&](const std::string& n) { return p + n + ".bias"; };
  const int64_t h = c.hidden_size, inter = c.intermediate_size;
  const int64_t q = c.attention_width(), kv = int64_t{c.kv_heads()} * c.head_dim();
  const char* qkv_dims = "num_attention_heads, num_key_value_heads, head_dim, hidden_size";
  if (!names.qkv.empty()) {
    TESSERA_RETURN_IF_ERROR(
        add_linear_parts(file, {{w(names.qkv), {q + 2 * kv, h}}}, qkv_dims, &s->qkv_w));
    if (c.attention_bias) {
      TESSERA_RETURN_IF_ERROR(plan.add({b(names.qkv)}, {q + 2 * kv}, qkv_dims, &s->qkv_b));
    }
  } else {
    TESSERA_RETURN_IF_ERROR(add_linear_parts(
        file, {{w(names.query), {q, h}}, {w(names.key), {kv, h}}, {w(names.value), {kv, h}}},
        qkv_dims, &s->qkv_w));
    if (c.attention_bias) {
      TESSERA_RETURN_IF_ERROR(
          plan.add_parts({{b(names.query), {q}}, {b(names.key), {kv}}, {b(names.value), {kv}}},
                         qkv_dims, &s->qkv_b));
    }
  }
  if (c.qk_norm) {
    const int64_t d = c.head_dim();
    TESSERA_RETURN_IF_ERROR(plan.add({w(names.q_norm)}, {d}, "head_dim", &s->q_norm));
    TESSERA_RETURN_IF_ERROR(plan.add({w(names.k_norm)}, {d}, "head_dim", &s->k_norm));
  }
  TESSERA_RETURN_IF_ERROR(add_linear(file, {w(names.attention_out)}, {h, q},
                                     "hidden_size, heads x head_dim", &s->attn_out_w));
  if (c.attention_bias && c.attention_out_bias) {
    TESSERA_RETURN_IF_ERROR(plan.add({b(names.attention_out)}, {h}, "hidden_size", &s->attn_out_b));
  }
  if (layer > 0 || c.first_layer_norm) {
    TESSERA_RETURN_IF_ERROR(plan_norm(plan, c, p + names.attention_norm, h, &s->ln1_g, &s->ln1_b));
  }
  const char* ffn_dims = "intermediate_size, hidden_size";
  if (!names.ffn_gate.empty()) {  // [gate; up] from two tensors
    TESSERA_RETURN_IF_ERROR(
        add_linear(file, {w(names.ffn_gate), w(names.ffn_in)}, {inter, h}, ffn_dims, &s->ffn_in_w));
  } else {
    TESSERA_RETURN_IF_ERROR(
        add_linear(file, {w(names.ffn_in)}, {c.ffn_in_rows(), h}, ffn_dims, &s->ffn_in_w));
    s->ffn_in_w.swap_halves = names.ffn_in_up_first;
    if (names.ffn_in_up_first && c.mlp_bias && c.mlp_in_bias) {
      return unsupported(p + names.ffn_in +
                         ": a bias on an [up; gate] product is not supported (GTE's has none)");
    }
  }
  if (c.mlp_bias && c.mlp_in_bias) {
    if (!names.ffn_gate.empty()) {
      TESSERA_RETURN_IF_ERROR(plan.add({b(names.ffn_gate), b(names.ffn_in)}, {inter},
                                       "intermediate_size", &s->ffn_in_b));
    } else {
      TESSERA_RETURN_IF_ERROR(
          plan.add({b(names.ffn_in)}, {c.ffn_in_rows()}, "intermediate_size", &s->ffn_in_b));
    }
  }
  TESSERA_RETURN_IF_ERROR(add_linear(file, {w(names.ffn_out)}, {h, inter},
                                     "hidden_size, intermediate_size", &s->ffn_out_w));
  if (c.mlp_bias) {
    TESSERA_RETURN_IF_ERROR(plan.add({b(names.ffn_out)}, {h}, "hidden_size", &s->ffn_out_b));
  }
  return plan_norm(plan, c, p + names.ffn_norm, h, &s->ln2_g, &s->ln2_b);
}

}  // namespace

size_t NetworkWeights::bytes() const {
  size_t total = arena.bytes();
  for (const LayerWeights& l : layers) {
    total += l.qkv_w.bytes() + l.attn_out_w.bytes() + l.ffn_in_w.bytes() + l.ffn_out_w.bytes();
  }
  if (classifier) total += classifier->dense_w.bytes();
  if (masked_lm) total += masked_lm->transform_w.bytes() + masked_lm->decoder_w.bytes();
  return total;
}

Status load_network_weights(const SafetensorsFile& file, const NetworkConfig& config,
                            WeightPrecision precision, TrackingAllocator& allocator,
                            NetworkWeights* out) {
  const WeightNames names = config.architecture->weight_names(config);
  std::string prefix;
  TESSERA_RETURN_IF_ERROR(
      find_prefix(file, names.word_embeddings, config.architecture->name(), &prefix));
  const int64_t h = config.hidden_size;
  const int64_t vocab = config.vocab_size;
  Planner plan(file);

  size_t word, pos = kNone, type = 0, emb_g = kNone, emb_b = kNone, rel = 0;
  size_t final_g = kNone, final_b = kNone;
  TESSERA_RETURN_IF_ERROR(
      plan.add({prefix + names.word_embeddings}, {vocab, h}, "vocab_size, hidden_size", &word));
  if (config.absolute_positions) {
    TESSERA_RETURN_IF_ERROR(plan.add({prefix + names.position_embeddings},
                                     {config.max_position_embeddings, h},
                                     "max_position_embeddings, hidden_size", &pos));
  }
  if (config.type_vocab_size > 0) {
    TESSERA_RETURN_IF_ERROR(plan.add({prefix + names.token_type_embeddings},
                                     {config.type_vocab_size, h}, "type_vocab_size, hidden_size",
                                     &type));
  }
  if (config.embedding_norm) {
    TESSERA_RETURN_IF_ERROR(
        plan_norm(plan, config, prefix + names.embeddings_norm, h, &emb_g, &emb_b));
  }
  if (config.final_norm) {
    TESSERA_RETURN_IF_ERROR(
        plan_norm(plan, config, prefix + names.final_norm, h, &final_g, &final_b));
  }
  if (config.relative_attention_num_buckets > 0) {
    TESSERA_RETURN_IF_ERROR(
        plan.add({prefix + names.relative_attention_bias},
                 {config.relative_attention_num_buckets, config.num_attention_heads},
                 "relative_attention_num_buckets, num_attention_heads", &rel));
  }

  std::vector<LayerSlots> slots(config.num_hidden_layers);
  for (int l = 0; l < config.num_hidden_layers; ++l) {
    TESSERA_RETURN_IF_ERROR(
        plan_layer(file, plan, names, config, l, prefix + layer_prefix(names.layer, l), &slots[l]));
  }
  // A checkpoint with more layers than num_hidden_layers disagrees with its config.
  const std::string extra = prefix + layer_prefix(names.layer, config.num_hidden_layers) +
                            names.attention_out + ".weight";
  if (file.find(extra) != nullptr) {
    return invalid_argument(
        file.path() + ": has tensor '" + extra +
        "' but config.json num_hidden_layers = " + std::to_string(config.num_hidden_layers));
  }

  // Heads.
  LinearSlot cls_dense, mlm_transform, mlm_decoder;
  size_t cls_dense_b = kNone, cls_out_w = 0, cls_out_b = 0, cls_norm_g = kNone, cls_norm_b = kNone;
  size_t mlm_transform_b = 0, mlm_g = 0, mlm_b = 0, mlm_bias = 0;
  bool tied_decoder = false;
  const int64_t labels = config.num_labels;
  if (config.head == HeadKind::kSequenceClassification) {
    const std::string dense = head_tensor(file, prefix, names.classifier_dense + ".weight");
    const std::string out_w = head_tensor(file, prefix, names.classifier_out + ".weight");
    TESSERA_RETURN_IF_ERROR(add_linear(file, {dense}, {h, h}, "hidden_size", &cls_dense));
    if (config.classifier.dense_bias) {
      TESSERA_RETURN_IF_ERROR(
          plan.add({head_tensor(file, prefix, names.classifier_dense + ".bias")}, {h},
                   "hidden_size", &cls_dense_b));
    }
    if (config.classifier.norm) {
      TESSERA_RETURN_IF_ERROR(
          plan.add({head_tensor(file, prefix, names.classifier_norm + ".weight")}, {h},
                   "hidden_size", &cls_norm_g));
      if (config.norm_bias) {
        TESSERA_RETURN_IF_ERROR(
            plan.add({head_tensor(file, prefix, names.classifier_norm + ".bias")}, {h},
                     "hidden_size", &cls_norm_b));
      }
    }
    TESSERA_RETURN_IF_ERROR(
        plan.add({out_w}, {labels, h}, "id2label size, hidden_size", &cls_out_w));
    TESSERA_RETURN_IF_ERROR(plan.add({head_tensor(file, prefix, names.classifier_out + ".bias")},
                                     {labels}, "id2label size", &cls_out_b));
  } else if (config.head == HeadKind::kMaskedLm) {
    TESSERA_RETURN_IF_ERROR(add_linear(file,
                                       {head_tensor(file, prefix, names.mlm_transform + ".weight")},
                                       {h, h}, "hidden_size", &mlm_transform));
    TESSERA_RETURN_IF_ERROR(plan.add({head_tensor(file, prefix, names.mlm_transform + ".bias")},
                                     {h}, "hidden_size", &mlm_transform_b));
    TESSERA_RETURN_IF_ERROR(plan.add({head_tensor(file, prefix, names.mlm_norm + ".weight")}, {h},
                                     "hidden_size", &mlm_g));
    TESSERA_RETURN_IF_ERROR(plan.add({head_tensor(file, prefix, names.mlm_norm + ".bias")}, {h},
                                     "hidden_size", &mlm_b));
    const std::string decoder = head_tensor(file, prefix, names.mlm_decoder);
    tied_decoder = file.find(decoder) == nullptr;  // saved once, as the word embeddings
    if (!tied_decoder) {
      TESSERA_RETURN_IF_ERROR(
          add_linear(file, {decoder}, {vocab, h}, "vocab_size, hidden_size", &mlm_decoder));
    }
    TESSERA_RETURN_IF_ERROR(
        plan.add({head_tensor(file, prefix, names.mlm_bias)}, {vocab}, "vocab_size", &mlm_bias));
  }

  NetworkWeights w;
  w.precision = precision;
  TESSERA_RETURN_IF_ERROR(
      Buffer::allocate(allocator, plan.total_floats() * sizeof(float), "model.weights", &w.arena));
  float* base = w.arena.as<float>();
  TESSERA_RETURN_IF_ERROR(plan.copy_into(base));
  const auto at = [base](size_t slot) -> const float* {
    return slot == kNone ? nullptr : base + slot;
  };
  w.word_embeddings = base + word;
  w.position_embeddings = at(pos);
  if (config.type_vocab_size > 0) w.token_type_embeddings = base + type;
  w.embeddings_ln_gamma = at(emb_g);
  w.embeddings_ln_beta = at(emb_b);
  w.final_norm_gamma = at(final_g);
  w.final_norm_beta = at(final_b);
  if (config.relative_attention_num_buckets > 0) w.relative_attention_bias = base + rel;
  for (const LayerSlots& s : slots) {
    LayerWeights l;
    TESSERA_RETURN_IF_ERROR(finish_linear(s.qkv_w, precision, allocator, &l.qkv_w));
    TESSERA_RETURN_IF_ERROR(finish_linear(s.attn_out_w, precision, allocator, &l.attn_out_w));
    TESSERA_RETURN_IF_ERROR(finish_linear(s.ffn_in_w, precision, allocator, &l.ffn_in_w));
    TESSERA_RETURN_IF_ERROR(finish_linear(s.ffn_out_w, precision, allocator, &l.ffn_out_w));
    l.qkv_b = at(s.qkv_b);
    l.q_norm = at(s.q_norm);
    l.k_norm = at(s.k_norm);
    l.attn_out_b = at(s.attn_out_b);
    l.ln1_gamma = at(s.ln1_g);
    l.ln1_beta = at(s.ln1_b);
    l.ffn_in_b = at(s.ffn_in_b);
    l.ffn_out_b = at(s.ffn_out_b);
    l.ln2_gamma = at(s.ln2_g);
    l.ln2_beta = at(s.ln2_b);
    w.layers.push_back(std::move(l));
  }
  if (config.head == HeadKind::kSequenceClassification) {
    ClassifierWeights c;
    TESSERA_RETURN_IF_ERROR(finish_linear(cls_dense, precision, allocator, &c.dense_w));
    c.dense_b = at(cls_dense_b);
    c.norm_g = at(cls_norm_g);
    c.norm_b = at(cls_norm_b);
    c.out_w = base + cls_out_w;
    c.out_b = base + cls_out_b;
    c.labels = static_cast<int>(labels);
    w.classifier = std::move(c);
  } else if (config.head == HeadKind::kMaskedLm) {
    MaskedLmWeights m;
    TESSERA_RETURN_IF_ERROR(finish_linear(mlm_transform, precision, allocator, &m.transform_w));
    if (tied_decoder) {
      TESSERA_RETURN_IF_ERROR(
          pack(w.word_embeddings, vocab, h, precision, allocator, &m.decoder_w));
    } else {
      TESSERA_RETURN_IF_ERROR(finish_linear(mlm_decoder, precision, allocator, &m.decoder_w));
    }
    m.transform_b = base + mlm_transform_b;
    m.norm_gamma = base + mlm_g;
    m.norm_beta = base + mlm_b;
    m.decoder_b = base + mlm_bias;
    w.masked_lm = std::move(m);
  }
  *out = std::move(w);
  return Status::Ok();
}

}  // namespace tessera::model
