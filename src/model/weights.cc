#include "model/weights.h"

#include <memory>
#include <string>

namespace tessera::model {

namespace {

constexpr const char* kWordEmbeddings = "embeddings.word_embeddings.weight";
constexpr size_t kArenaAlignFloats = TrackingAllocator::kAlignment / sizeof(float);

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

// One source tensor and where its f32 copy goes.
struct Piece {
  const SafeTensor* tensor;
  size_t dst_offset;  // floats from the start of the arena
};

class Planner {
 public:
  Planner(const SafetensorsFile& file, std::string prefix)
      : file_(file), prefix_(std::move(prefix)) {}

  // Reserves one arena array made of `names` stacked along dim 0, each of
  // shape `shape`; `slot` receives its offset.
  Status add(std::initializer_list<std::string> names, const std::vector<int64_t>& shape,
             const char* derived_from, size_t* slot) {
    size_t per = 1;
    for (int64_t d : shape) per *= static_cast<size_t>(d);
    *slot = total_;
    size_t at = total_;
    for (const std::string& name : names) {
      const std::string full = prefix_ + name;
      const SafeTensor* t = file_.find(full);
      if (t == nullptr) {
        return not_found(file_.path() + ": missing tensor '" + full + "'");
      }
      if (t->shape != shape) {
        return invalid_argument(file_.path() + ": tensor '" + full + "' has shape " +
                                t->shape_string() + " but config.json (" + derived_from +
                                ") implies " + shape_str(shape));
      }
      if (!t->float_dtype) {
        return unsupported(file_.path() + ": tensor '" + full + "' has dtype " + t->dtype +
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
  std::string prefix_;
  std::vector<Piece> pieces_;
  size_t total_ = 0;
};

// One Linear weight: its own plan, read into a temporary f32 block once the
// arena is filled and packed (PackedWeights) in the precision asked for.
struct LinearSlot {
  std::unique_ptr<Planner> staging;
  int64_t n = 0, k = 0;
};

Status add_linear(const SafetensorsFile& file, const std::string& prefix,
                  std::initializer_list<std::string> names, const std::vector<int64_t>& shape,
                  const char* derived_from, LinearSlot* slot) {
  slot->n = shape[0] * static_cast<int64_t>(names.size());
  slot->k = shape[1];
  slot->staging = std::make_unique<Planner>(file, prefix);
  size_t at_zero;
  return slot->staging->add(names, shape, derived_from, &at_zero);
}

Status finish_linear(const LinearSlot& slot, WeightPrecision precision,
                     TrackingAllocator& allocator, PackedWeights* out) {
  Buffer staging;
  TESSERA_RETURN_IF_ERROR(Buffer::allocate(allocator, slot.staging->total_floats() * sizeof(float),
                                           "model.weights.staging", &staging));
  TESSERA_RETURN_IF_ERROR(slot.staging->copy_into(staging.as<float>()));
  const WeightType type =
      precision == WeightPrecision::kBf16 ? WeightType::kBf16 : WeightType::kF32;
  return PackedWeights::create(staging.as<float>(), slot.n, slot.k, type, allocator,
                               "model.weights", out);
}

Status find_prefix(const SafetensorsFile& file, std::string* prefix) {
  const std::string suffix = kWordEmbeddings;
  for (const SafeTensor& t : file.tensors()) {
    if (t.name.size() >= suffix.size() &&
        t.name.compare(t.name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      *prefix = t.name.substr(0, t.name.size() - suffix.size());
      return Status::Ok();
    }
  }
  return not_found(file.path() + ": no tensor named '" + suffix +
                   "' (or under a prefix such as 'bert.'); not a BERT checkpoint?");
}

}  // namespace

size_t BertWeights::bytes() const {
  size_t total = arena.bytes();
  for (const LayerWeights& l : layers) {
    total += l.qkv_w.bytes() + l.attn_out_w.bytes() + l.ffn_in_w.bytes() + l.ffn_out_w.bytes();
  }
  return total;
}

Status load_bert_weights(const SafetensorsFile& file, const BertConfig& config,
                         WeightPrecision precision, TrackingAllocator& allocator,
                         BertWeights* out) {
  std::string prefix;
  TESSERA_RETURN_IF_ERROR(find_prefix(file, &prefix));
  const int64_t h = config.hidden_size, inter = config.intermediate_size;
  Planner plan(file, prefix);

  struct LayerSlots {
    LinearSlot qkv_w, attn_out_w, ffn_in_w, ffn_out_w;
    size_t qkv_b, attn_out_b, ln1_g, ln1_b, ffn_in_b, ffn_out_b, ln2_g, ln2_b;
  };
  size_t word, pos, type, emb_g, emb_b;
  TESSERA_RETURN_IF_ERROR(plan.add({"embeddings.word_embeddings.weight"},
                                   {config.vocab_size, h}, "vocab_size, hidden_size", &word));
  TESSERA_RETURN_IF_ERROR(plan.add({"embeddings.position_embeddings.weight"},
                                   {config.max_position_embeddings, h},
                                   "max_position_embeddings, hidden_size", &pos));
  TESSERA_RETURN_IF_ERROR(plan.add({"embeddings.token_type_embeddings.weight"},
                                   {config.type_vocab_size, h}, "type_vocab_size, hidden_size",
                                   &type));
  TESSERA_RETURN_IF_ERROR(
      plan.add({"embeddings.LayerNorm.weight"}, {h}, "hidden_size", &emb_g));
  TESSERA_RETURN_IF_ERROR(plan.add({"embeddings.LayerNorm.bias"}, {h}, "hidden_size", &emb_b));

  std::vector<LayerSlots> slots(config.num_hidden_layers);
  for (int l = 0; l < config.num_hidden_layers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    const std::string self = p + "attention.self.";
    LayerSlots& s = slots[l];
    TESSERA_RETURN_IF_ERROR(
        add_linear(file, prefix, {self + "query.weight", self + "key.weight", self + "value.weight"}, {h, h},
                   "hidden_size", &s.qkv_w));
    TESSERA_RETURN_IF_ERROR(plan.add({self + "query.bias", self + "key.bias", self + "value.bias"},
                                     {h}, "hidden_size", &s.qkv_b));
    TESSERA_RETURN_IF_ERROR(add_linear(file, prefix, {p + "attention.output.dense.weight"}, {h, h}, "hidden_size",
                                       &s.attn_out_w));
    TESSERA_RETURN_IF_ERROR(
        plan.add({p + "attention.output.dense.bias"}, {h}, "hidden_size", &s.attn_out_b));
    TESSERA_RETURN_IF_ERROR(
        plan.add({p + "attention.output.LayerNorm.weight"}, {h}, "hidden_size", &s.ln1_g));
    TESSERA_RETURN_IF_ERROR(
        plan.add({p + "attention.output.LayerNorm.bias"}, {h}, "hidden_size", &s.ln1_b));
    TESSERA_RETURN_IF_ERROR(add_linear(file, prefix, {p + "intermediate.dense.weight"}, {inter, h},
                                       "intermediate_size, hidden_size", &s.ffn_in_w));
    TESSERA_RETURN_IF_ERROR(
        plan.add({p + "intermediate.dense.bias"}, {inter}, "intermediate_size", &s.ffn_in_b));
    TESSERA_RETURN_IF_ERROR(add_linear(file, prefix, {p + "output.dense.weight"},
                                       {h, inter}, "hidden_size, intermediate_size", &s.ffn_out_w));
    TESSERA_RETURN_IF_ERROR(plan.add({p + "output.dense.bias"}, {h}, "hidden_size", &s.ffn_out_b));
    TESSERA_RETURN_IF_ERROR(
        plan.add({p + "output.LayerNorm.weight"}, {h}, "hidden_size", &s.ln2_g));
    TESSERA_RETURN_IF_ERROR(plan.add({p + "output.LayerNorm.bias"}, {h}, "hidden_size", &s.ln2_b));
  }
  // A checkpoint with more layers than num_hidden_layers disagrees with its config.
  const std::string extra = prefix + "encoder.layer." + std::to_string(config.num_hidden_layers) +
                            ".attention.self.query.weight";
  if (file.find(extra) != nullptr) {
    return invalid_argument(file.path() + ": has tensor '" + extra +
                            "' but config.json num_hidden_layers = " +
                            std::to_string(config.num_hidden_layers));
  }

  BertWeights w;
  w.precision = precision;
  TESSERA_RETURN_IF_ERROR(Buffer::allocate(allocator, plan.total_floats() * sizeof(float),
                                           "model.weights", &w.arena));
  float* base = w.arena.as<float>();
  TESSERA_RETURN_IF_ERROR(plan.copy_into(base));
  w.word_embeddings = base + word;
  w.position_embeddings = base + pos;
  w.token_type_embeddings = base + type;
  w.embeddings_ln_gamma = base + emb_g;
  w.embeddings_ln_beta = base + emb_b;
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
  *out = std::move(w);
  return Status::Ok();
}

}  // namespace tessera::model
