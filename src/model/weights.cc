#include "model/weights.h"

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
class Planner {
 public:
  explicit Planner(const SafetensorsFile& file) : file_(file) {}

  // Reserves one arena array made of `names` stacked along dim 0, each of
  // shape `shape`; `slot` receives its offset.
  Status add(std::initializer_list<std::string> names, const std::vector<int64_t>& shape,
             const char* derived_from, size_t* slot) {
    size_t per = 1;
    for (int64_t d : shape) per *= static_cast<size_t>(d);
    *slot = total_;
    size_t at = total_;
    for (const std::string& name : names) {
      const SafeTensor* t = file_.find(name);
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
};

Status add_linear(const SafetensorsFile& file, std::initializer_list<std::string> names,
                  const std::vector<int64_t>& shape, const char* derived_from, LinearSlot* slot) {
  slot->n = shape[0] * static_cast<int64_t>(names.size());
  slot->k = shape[1];
  slot->staging = std::make_unique<Planner>(file);
  size_t at_zero;
  return slot->staging->add(names, shape, derived_from, &at_zero);
}

Status pack(const float* w, int64_t n, int64_t k, WeightPrecision precision,
            TrackingAllocator& allocator, PackedWeights* out) {
  const WeightType type =
      precision == WeightPrecision::kBf16 ? WeightType::kBf16 : WeightType::kF32;
  return PackedWeights::create(w, n, k, type, allocator, "model.weights", out);
}

Status finish_linear(const LinearSlot& slot, WeightPrecision precision,
                     TrackingAllocator& allocator, PackedWeights* out) {
  Buffer staging;
  TESSERA_RETURN_IF_ERROR(Buffer::allocate(allocator, slot.staging->total_floats() * sizeof(float),
                                           "model.weights.staging", &staging));
  TESSERA_RETURN_IF_ERROR(slot.staging->copy_into(staging.as<float>()));
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
    if (file.find(prefix + name) != nullptr) return prefix + name;
    if (file.find(name) != nullptr) return name;
    begin = end + 1;
  }
  return prefix + alternatives.substr(0, alternatives.find('|'));
}

struct LayerSlots {
  LinearSlot qkv_w, attn_out_w, ffn_in_w, ffn_out_w;
  size_t qkv_b, attn_out_b, ln1_g, ln1_b, ffn_in_b, ffn_out_b, ln2_g, ln2_b;
};

Status plan_layer(const SafetensorsFile& file, Planner& plan, const WeightNames& names,
                  const std::string& p, int64_t h, int64_t inter, LayerSlots* s) {
  const auto w = [&](const std::string& n) { return p + n + ".weight"; };
  const auto b = [&](const std::string& n) { return p + n + ".bias"; };
  TESSERA_RETURN_IF_ERROR(add_linear(file, {w(names.query), w(names.key), w(names.value)}, {h, h},
                                     "hidden_size", &s->qkv_w));
  TESSERA_RETURN_IF_ERROR(
      plan.add({b(names.query), b(names.key), b(names.value)}, {h}, "hidden_size", &s->qkv_b));
  TESSERA_RETURN_IF_ERROR(
      add_linear(file, {w(names.attention_out)}, {h, h}, "hidden_size", &s->attn_out_w));
  TESSERA_RETURN_IF_ERROR(plan.add({b(names.attention_out)}, {h}, "hidden_size", &s->attn_out_b));
  TESSERA_RETURN_IF_ERROR(plan.add({w(names.attention_norm)}, {h}, "hidden_size", &s->ln1_g));
  TESSERA_RETURN_IF_ERROR(plan.add({b(names.attention_norm)}, {h}, "hidden_size", &s->ln1_b));
  TESSERA_RETURN_IF_ERROR(add_linear(file, {w(names.ffn_in)}, {inter, h},
                                     "intermediate_size, hidden_size", &s->ffn_in_w));
  TESSERA_RETURN_IF_ERROR(plan.add({b(names.ffn_in)}, {inter}, "intermediate_size", &s->ffn_in_b));
  TESSERA_RETURN_IF_ERROR(add_linear(file, {w(names.ffn_out)}, {h, inter},
                                     "hidden_size, intermediate_size", &s->ffn_out_w));
  TESSERA_RETURN_IF_ERROR(plan.add({b(names.ffn_out)}, {h}, "hidden_size", &s->ffn_out_b));
  TESSERA_RETURN_IF_ERROR(plan.add({w(names.ffn_norm)}, {h}, "hidden_size", &s->ln2_g));
  return plan.add({b(names.ffn_norm)}, {h}, "hidden_size", &s->ln2_b);
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
  const int64_t h = config.hidden_size, inter = config.intermediate_size;
  const int64_t vocab = config.vocab_size;
  Planner plan(file);

  size_t word, pos, type = 0, emb_g, emb_b, rel = 0;
  TESSERA_RETURN_IF_ERROR(
      plan.add({prefix + names.word_embeddings}, {vocab, h}, "vocab_size, hidden_size", &word));
  TESSERA_RETURN_IF_ERROR(plan.add({prefix + names.position_embeddings},
                                   {config.max_position_embeddings, h},
                                   "max_position_embeddings, hidden_size", &pos));
  if (config.type_vocab_size > 0) {
    TESSERA_RETURN_IF_ERROR(plan.add({prefix + names.token_type_embeddings},
                                     {config.type_vocab_size, h}, "type_vocab_size, hidden_size",
                                     &type));
  }
  TESSERA_RETURN_IF_ERROR(
      plan.add({prefix + names.embeddings_norm + ".weight"}, {h}, "hidden_size", &emb_g));
  TESSERA_RETURN_IF_ERROR(
      plan.add({prefix + names.embeddings_norm + ".bias"}, {h}, "hidden_size", &emb_b));
  if (config.relative_attention_num_buckets > 0) {
    TESSERA_RETURN_IF_ERROR(
        plan.add({prefix + names.relative_attention_bias},
                 {config.relative_attention_num_buckets, config.num_attention_heads},
                 "relative_attention_num_buckets, num_attention_heads", &rel));
  }

  std::vector<LayerSlots> slots(config.num_hidden_layers);
  for (int l = 0; l < config.num_hidden_layers; ++l) {
    TESSERA_RETURN_IF_ERROR(
        plan_layer(file, plan, names, prefix + layer_prefix(names.layer, l), h, inter, &slots[l]));
  }
  // A checkpoint with more layers than num_hidden_layers disagrees with its config.
  const std::string extra =
      prefix + layer_prefix(names.layer, config.num_hidden_layers) + names.query + ".weight";
  if (file.find(extra) != nullptr) {
    return invalid_argument(
        file.path() + ": has tensor '" + extra +
        "' but config.json num_hidden_layers = " + std::to_string(config.num_hidden_layers));
  }

  // Heads.
  LinearSlot cls_dense, mlm_transform, mlm_decoder;
  size_t cls_dense_b = 0, cls_out_w = 0, cls_out_b = 0;
  size_t mlm_transform_b = 0, mlm_g = 0, mlm_b = 0, mlm_bias = 0;
  bool tied_decoder = false;
  const int64_t labels = config.num_labels;
  if (config.head == HeadKind::kSequenceClassification) {
    const std::string dense = head_tensor(file, prefix, names.classifier_dense + ".weight");
    const std::string out_w = head_tensor(file, prefix, names.classifier_out + ".weight");
    TESSERA_RETURN_IF_ERROR(add_linear(file, {dense}, {h, h}, "hidden_size", &cls_dense));
    TESSERA_RETURN_IF_ERROR(plan.add({head_tensor(file, prefix, names.classifier_dense + ".bias")},
                                     {h}, "hidden_size", &cls_dense_b));
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
  w.word_embeddings = base + word;
  w.position_embeddings = base + pos;
  if (config.type_vocab_size > 0) w.token_type_embeddings = base + type;
  w.embeddings_ln_gamma = base + emb_g;
  w.embeddings_ln_beta = base + emb_b;
  if (config.relative_attention_num_buckets > 0) w.relative_attention_bias = base + rel;
  for (const LayerSlots& s : slots) {
    LayerWeights l;
    TESSERA_RETURN_IF_ERROR(finish_linear(s.qkv_w, precision, allocator, &l.qkv_w));
    TESSERA_RETURN_IF_ERROR(finish_linear(s.attn_out_w, precision, allocator, &l.attn_out_w));
    TESSERA_RETURN_IF_ERROR(finish_linear(s.ffn_in_w, precision, allocator, &l.ffn_in_w));
    TESSERA_RETURN_IF_ERROR(finish_linear(s.ffn_out_w, precision, allocator, &l.ffn_out_w));
    l.qkv_b = base + s.qkv_b;
    l.attn_out_b = base + s.attn_out_b;
    l.ln1_gamma = base + s.ln1_g;
    l.ln1_beta = base + s.ln1_b;
    l.ffn_in_b = base + s.ffn_in_b;
    l.ffn_out_b = base + s.ffn_out_b;
    l.ln2_gamma = base + s.ln2_g;
    l.ln2_beta = base + s.ln2_b;
    w.layers.push_back(std::move(l));
  }
  if (config.head == HeadKind::kSequenceClassification) {
    ClassifierWeights c;
    TESSERA_RETURN_IF_ERROR(finish_linear(cls_dense, precision, allocator, &c.dense_w));
    c.dense_b = base + cls_dense_b;
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
