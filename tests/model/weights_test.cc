#include "model/weights.h"

#include <gtest/gtest.h>

#include "model_test_util.h"
#include "tessera/context.h"

namespace tessera::model {
namespace {

using testing::FakeTensor;
using testing::TempDir;
using testing::TinyBert;

struct Loaded {
  Status status;
  NetworkWeights weights;
};

Loaded load(const TinyBert& tiny, const std::vector<FakeTensor>& tensors, Context& ctx,
            WeightPrecision precision = WeightPrecision::kF32) {
  TempDir dir;
  tiny.write(dir.path().string(), tensors);
  ModelConfig config;
  Loaded out;
  out.status = load_model_config(dir.path().string(), &config);
  if (!out.status.ok()) return out;
  std::unique_ptr<SafetensorsFile> file;
  out.status = SafetensorsFile::open(config.weights_path, &file);
  if (!out.status.ok()) return out;
  out.status =
      load_network_weights(*file, config.network, precision, ctx.allocator(), &out.weights);
  return out;
}

const FakeTensor& find(const std::vector<FakeTensor>& ts, const std::string& name) {
  for (const FakeTensor& t : ts) {
    if (t.name == name) return t;
  }
  throw std::runtime_error(name);
}

TEST(Weights, LoadsAndFusesQkvInTrackedMemory) {
  Context ctx;
  {
    TinyBert tiny;
    const auto tensors = tiny.tensors();
    Loaded l = load(tiny, tensors, ctx);
    ASSERT_TRUE(l.status.ok()) << l.status.to_string();
    ASSERT_EQ(l.weights.layers.size(), 2u);
    const int h = tiny.hidden;
    // Rows of the fused matrix: query, then key, then value (unpacked from
    // the GEMM library's layout: f32 keeps every value).
    std::vector<float> qkv(size_t{3} * h * h), ffn_out(static_cast<size_t>(h) * tiny.intermediate);
    ASSERT_TRUE(l.weights.layers[1].qkv_w.unpack(qkv.data()).ok());
    ASSERT_TRUE(l.weights.layers[0].ffn_out_w.unpack(ffn_out.data()).ok());
    const char* parts[] = {"query", "key", "value"};
    for (int p = 0; p < 3; ++p) {
      const auto& w =
          find(tensors, std::string("encoder.layer.1.attention.self.") + parts[p] + ".weight");
      const auto& b =
          find(tensors, std::string("encoder.layer.1.attention.self.") + parts[p] + ".bias");
      for (int i = 0; i < h * h; ++i) {
        EXPECT_EQ(qkv[p * h * h + i], w.values[i]);
      }
      for (int i = 0; i < h; ++i) EXPECT_EQ(l.weights.layers[1].qkv_b[p * h + i], b.values[i]);
    }
    const auto& word = find(tensors, "embeddings.word_embeddings.weight");
    EXPECT_EQ(l.weights.word_embeddings[5 * h + 3], word.values[5 * h + 3]);
    const auto& ffn = find(tensors, "encoder.layer.0.output.dense.weight");
    for (int i = 0; i < h * tiny.intermediate; ++i) EXPECT_EQ(ffn_out[i], ffn.values[i]);
    EXPECT_GT(ctx.allocator().by_owner().at("model.weights").live_bytes, 0u);
  }
  EXPECT_TRUE(ctx.allocator().leaks().empty());
}

// Linear weights are packed outside the arena (f32 or bf16, half the bytes),
// the temporary f32 block of each is freed, and a mis-shaped one is still named.
TEST(Weights, LinearWeightsArePackedOutsideTheArena) {
  Context ctx;
  TinyBert tiny;
  auto tensors = tiny.tensors();
  Loaded f32 = load(tiny, tensors, ctx);
  Loaded bf16 = load(tiny, tensors, ctx, WeightPrecision::kBf16);
  if (bf16.status.code() == StatusCode::kUnsupported) GTEST_SKIP() << bf16.status.to_string();
  ASSERT_TRUE(f32.status.ok() && bf16.status.ok()) << bf16.status.to_string();
  const int64_t h = tiny.hidden;
  const LayerWeights& l = bf16.weights.layers[1];
  EXPECT_EQ(l.qkv_w.type(), WeightType::kBf16);
  EXPECT_EQ(f32.weights.layers[1].qkv_w.type(), WeightType::kF32);
  EXPECT_EQ(l.qkv_w.n(), 3 * h);
  EXPECT_EQ(l.qkv_w.k(), h);
  EXPECT_EQ(l.ffn_out_w.n(), h);
  EXPECT_EQ(l.ffn_out_w.k(), tiny.intermediate);
  EXPECT_EQ(bf16.weights.precision, WeightPrecision::kBf16);
  // Same arena (no Linear weight in it) for both precisions; every packed
  // weight at least its element count in its precision.
  const size_t linear_floats = 2 * (4 * h * h + 2 * h * tiny.intermediate);
  EXPECT_EQ(bf16.weights.arena.bytes(), f32.weights.arena.bytes());
  EXPECT_GE(f32.weights.bytes() - f32.weights.arena.bytes(), linear_floats * sizeof(float));
  EXPECT_GE(bf16.weights.bytes() - bf16.weights.arena.bytes(), linear_floats * 2);
  EXPECT_EQ(ctx.allocator().by_owner().at("model.weights.staging").live_bytes, 0u);
  EXPECT_EQ(ctx.allocator().live_bytes(), f32.weights.bytes() + bf16.weights.bytes());

  for (FakeTensor& t : tensors) {
    if (t.name == "encoder.layer.1.intermediate.dense.weight") {
      t.shape = {13, 8};
      t.values.resize(size_t{13} * 8, 0.0f);
    }
  }
  Loaded bad = load(tiny, tensors, ctx, WeightPrecision::kBf16);
  EXPECT_EQ(bad.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status.message().find("[13, 8]"), std::string::npos) << bad.status.message();
}

// int8: the same arena, s8 Linear weights (at least one byte each; tiny
// shapes are padded to the library's blocks) plus their channel scales, all
// under "model.weights"; the staging blocks freed.
TEST(Weights, Int8LinearWeights) {
  Context ctx;
  TinyBert tiny;
  auto tensors = tiny.tensors();
  Loaded f32 = load(tiny, tensors, ctx);
  Loaded int8 = load(tiny, tensors, ctx, WeightPrecision::kInt8);
  if (int8.status.code() == StatusCode::kUnsupported) GTEST_SKIP() << int8.status.to_string();
  ASSERT_TRUE(f32.status.ok() && int8.status.ok()) << int8.status.to_string();
  EXPECT_EQ(int8.weights.precision, WeightPrecision::kInt8);
  for (const LayerWeights& l : int8.weights.layers) {
    for (const PackedWeights* w : {&l.qkv_w, &l.attn_out_w, &l.ffn_in_w, &l.ffn_out_w}) {
      EXPECT_EQ(w->type(), WeightType::kInt8);
      EXPECT_GE(w->bytes(), static_cast<size_t>(w->n() * w->k() + 2 * 4 * w->n()));
    }
  }
  EXPECT_EQ(int8.weights.arena.bytes(), f32.weights.arena.bytes());
  EXPECT_EQ(ctx.allocator().by_owner().at("model.weights.staging").live_bytes, 0u);
  EXPECT_EQ(ctx.allocator().by_owner().at("model.weights").live_bytes,
            f32.weights.bytes() + int8.weights.bytes());
}

TEST(Weights, PrefixAndHalfPrecision) {
  Context ctx;
  for (const char* dtype : {"F16", "BF16"}) {
    TinyBert tiny;
    tiny.prefix = "bert.";
    tiny.dtype = dtype;
    const auto tensors = tiny.tensors();
    Loaded l = load(tiny, tensors, ctx);
    ASSERT_TRUE(l.status.ok()) << dtype << ": " << l.status.to_string();
    const auto& g = find(tensors, "encoder.layer.0.output.LayerNorm.weight");
    const DType dt = std::string(dtype) == "F16" ? DType::kF16 : DType::kBF16;
    EXPECT_EQ(l.weights.layers[0].ln2_gamma[2], round_to_dtype(g.values[2], dt));
  }
}

// LayerNorms named gamma / beta (TF-converted checkpoints), with and
// without the architecture prefix, load as transformers renames them.
TEST(Weights, LegacyLayerNormNames) {
  Context ctx;
  for (const char* prefix : {"", "bert."}) {
    TinyBert tiny;
    tiny.prefix = prefix;
    auto tensors = tiny.tensors();
    const auto original = tensors;
    int renamed = 0;
    for (FakeTensor& t : tensors) {
      if (t.name.find("LayerNorm.") == std::string::npos) continue;
      const size_t dot = t.name.rfind('.');
      const std::string leaf = t.name.substr(dot + 1);
      t.name = t.name.substr(0, dot + 1) + (leaf == "weight" ? "gamma" : "beta");
      ++renamed;
    }
    ASSERT_GT(renamed, 4);
    Loaded l = load(tiny, tensors, ctx);
    ASSERT_TRUE(l.status.ok()) << prefix << ": " << l.status.to_string();
    const auto& g = find(original, "encoder.layer.1.output.LayerNorm.weight");
    const auto& b = find(original, "encoder.layer.1.output.LayerNorm.bias");
    EXPECT_EQ(l.weights.layers[1].ln2_gamma[3], g.values[3]);
    EXPECT_EQ(l.weights.layers[1].ln2_beta[3], b.values[3]);
    const auto& eg = find(original, "embeddings.LayerNorm.weight");
    EXPECT_EQ(l.weights.embeddings_ln_gamma[1], eg.values[1]);
  }
}

TEST(Weights, ShapeDisagreeingWithConfigNamesTensorAndShapes) {
  Context ctx;
  TinyBert tiny;
  auto tensors = tiny.tensors();
  for (FakeTensor& t : tensors) {
    if (t.name == "encoder.layer.1.intermediate.dense.weight") {
      t.shape = {13, 8};
      t.values.resize(size_t{13} * 8, 0.0f);
    }
  }
  Loaded l = load(tiny, tensors, ctx);
  EXPECT_EQ(l.status.code(), StatusCode::kInvalidArgument);
  for (const char* part : {"model.safetensors", "'encoder.layer.1.intermediate.dense.weight'",
                           "[13, 8]", "[12, 8]", "intermediate_size"}) {
    EXPECT_NE(l.status.message().find(part), std::string::npos) << l.status.message();
  }
}

TEST(Weights, MissingTensorExtraLayerAndWrongDtype) {
  Context ctx;
  TinyBert tiny;
  {
    auto tensors = tiny.tensors();
    std::erase_if(tensors, [](const FakeTensor& t) {
      return t.name == "encoder.layer.0.attention.self.value.bias";
    });
    Loaded l = load(tiny, tensors, ctx);
    EXPECT_EQ(l.status.code(), StatusCode::kNotFound);
    EXPECT_NE(l.status.message().find("'encoder.layer.0.attention.self.value.bias'"),
              std::string::npos)
        << l.status.message();
  }
  {
    TinyBert three = tiny;
    three.layers = 3;
    const TinyBert& two = tiny;  // the config says 2 layers, the file holds 3
    Loaded l = load(two, three.tensors(), ctx);
    EXPECT_EQ(l.status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(l.status.message().find("num_hidden_layers = 2"), std::string::npos)
        << l.status.message();
  }
  {
    TempDir dir;
    tiny.write(dir.path().string());
    testing::write_file(
        dir.file("model.safetensors"),
        testing::safetensors_bytes(
            R"({"embeddings.word_embeddings.weight":{"dtype":"I32","shape":[40,8],"data_offsets":[0,1280]}})",
            std::string(1280, '\0')));
    ModelConfig config;
    ASSERT_TRUE(load_model_config(dir.path().string(), &config).ok());
    std::unique_ptr<SafetensorsFile> file;
    ASSERT_TRUE(SafetensorsFile::open(config.weights_path, &file).ok());
    NetworkWeights w;
    const Status st =
        load_network_weights(*file, config.network, WeightPrecision::kF32, ctx.allocator(), &w);
    EXPECT_EQ(st.code(), StatusCode::kUnsupported);
    EXPECT_NE(st.message().find("I32"), std::string::npos) << st.message();
  }
  {
    TempDir dir;
    tiny.write(dir.path().string(), {{"something.else", {2}, {1, 2}}});
    ModelConfig config;
    ASSERT_TRUE(load_model_config(dir.path().string(), &config).ok());
    std::unique_ptr<SafetensorsFile> file;
    ASSERT_TRUE(SafetensorsFile::open(config.weights_path, &file).ok());
    NetworkWeights w;
    const Status st =
        load_network_weights(*file, config.network, WeightPrecision::kF32, ctx.allocator(), &w);
    EXPECT_EQ(st.code(), StatusCode::kNotFound);
    EXPECT_NE(st.message().find("not a bert checkpoint"), std::string::npos) << st.message();
  }
  EXPECT_TRUE(ctx.allocator().leaks().empty());
}

}  // namespace
}  // namespace tessera::model
