// The encoder on a tiny random BERT against a plain double-precision forward
// pass written here from the BERT definition (independent of src/model's
// kernels), for every pooling mode, with and without normalization.
#include "model/encoder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "model_test_util.h"
#include "tessera/registry.h"

namespace tessera::model {
namespace {

using testing::FakeTensor;
using testing::TempDir;
using testing::TinyBert;
using Mat = std::vector<double>;  // row-major

class Reference {
 public:
  Reference(const TinyBert& cfg, const std::vector<FakeTensor>& tensors) : c_(cfg) {
    for (const FakeTensor& t : tensors) {
      Mat& m = w_[t.name];
      for (float v : t.values) {
        m.push_back(t.dtype == "F32"
                        ? v
                        : round_to_dtype(v, t.dtype == "F16" ? DType::kF16 : DType::kBF16));
      }
    }
  }

  std::vector<double> embed(const std::vector<int32_t>& ids) const {
    const int64_t s = ids.size(), h = c_.hidden;
    Mat x(s * h);
    for (int64_t p = 0; p < s; ++p) {
      for (int64_t i = 0; i < h; ++i) {
        x[p * h + i] = at("embeddings.word_embeddings.weight")[ids[p] * h + i] +
                       at("embeddings.position_embeddings.weight")[p * h + i] +
                       at("embeddings.token_type_embeddings.weight")[i];
      }
    }
    layer_norm(&x, s, "embeddings.LayerNorm.");
    for (int l = 0; l < c_.layers; ++l) {
      const std::string p = "encoder.layer." + std::to_string(l) + ".";
      const Mat q = linear(x, s, p + "attention.self.query.");
      const Mat k = linear(x, s, p + "attention.self.key.");
      const Mat v = linear(x, s, p + "attention.self.value.");
      const int64_t dh = h / c_.heads;
      Mat ctx(s * h, 0.0);
      for (int64_t hd = 0; hd < c_.heads; ++hd) {
        for (int64_t i = 0; i < s; ++i) {
          std::vector<double> score(s);
          double mx = -1e300, sum = 0;
          for (int64_t j = 0; j < s; ++j) {
            double d = 0;
            for (int64_t e = 0; e < dh; ++e) d += q[i * h + hd * dh + e] * k[j * h + hd * dh + e];
            score[j] = d / std::sqrt(double(dh));
            mx = std::max(mx, score[j]);
          }
          for (double& sc : score) sum += (sc = std::exp(sc - mx));
          for (int64_t j = 0; j < s; ++j) {
            for (int64_t e = 0; e < dh; ++e) {
              ctx[i * h + hd * dh + e] += score[j] / sum * v[j * h + hd * dh + e];
            }
          }
        }
      }
      const Mat attn = linear(ctx, s, p + "attention.output.dense.");
      for (size_t i = 0; i < x.size(); ++i) x[i] += attn[i];
      layer_norm(&x, s, p + "attention.output.LayerNorm.");
      Mat f = linear(x, s, p + "intermediate.dense.");
      for (double& e : f) e = 0.5 * e * (1.0 + std::erf(e / std::sqrt(2.0)));
      const Mat y = linear(f, s, p + "output.dense.");
      for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
      layer_norm(&x, s, p + "output.LayerNorm.");
    }
    std::vector<double> out(h);
    for (int64_t i = 0; i < h; ++i) {
      double acc = c_.pooling == "max" ? -1e300 : 0.0;
      for (int64_t t = 0; t < (c_.pooling == "cls" ? 1 : s); ++t) {
        acc = c_.pooling == "max" ? std::max(acc, x[t * h + i]) : acc + x[t * h + i];
      }
      out[i] = c_.pooling == "mean" ? acc / s : acc;
    }
    if (c_.normalize) {
      double n = 0;
      for (double e : out) n += e * e;
      for (double& e : out) e /= std::sqrt(n);
    }
    return out;
  }

 private:
  const Mat& at(const std::string& name) const { return w_.at(name); }
  // y[s, out] = x[s, in] W^T + b
  Mat linear(const Mat& x, int64_t s, const std::string& p) const {
    const Mat& w = at(p + "weight");
    const Mat& b = at(p + "bias");
    const int64_t out = b.size(), in = w.size() / out;
    Mat y(s * out);
    for (int64_t r = 0; r < s; ++r) {
      for (int64_t o = 0; o < out; ++o) {
        double acc = b[o];
        for (int64_t i = 0; i < in; ++i) acc += x[r * in + i] * w[o * in + i];
        y[r * out + o] = acc;
      }
    }
    return y;
  }
  void layer_norm(Mat* x, int64_t s, const std::string& p) const {
    const Mat& g = at(p + "weight");
    const Mat& b = at(p + "bias");
    const int64_t h = g.size();
    for (int64_t r = 0; r < s; ++r) {
      double mean = 0, var = 0;
      for (int64_t i = 0; i < h; ++i) mean += (*x)[r * h + i];
      mean /= h;
      for (int64_t i = 0; i < h; ++i) var += std::pow((*x)[r * h + i] - mean, 2);
      var /= h;
      for (int64_t i = 0; i < h; ++i) {
        (*x)[r * h + i] = ((*x)[r * h + i] - mean) / std::sqrt(var + 1e-12) * g[i] + b[i];
      }
    }
  }

  TinyBert c_;
  std::map<std::string, Mat> w_;
};

std::vector<std::vector<int32_t>> random_sequences(const TinyBert& c, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<int32_t>> seqs;
  // Lengths 1 (a lone token), 2, ..., up to max_seq_length, in mixed order.
  for (int len : {5, 1, c.max_seq_length, 2, 7, c.max_seq_length - 1, 3}) {
    std::vector<int32_t> s(len);
    for (int32_t& id : s) id = static_cast<int32_t>(rng() % c.vocab);
    seqs.push_back(s);
  }
  return seqs;
}

struct Fixture {
  Registry registry;
  std::unique_ptr<Dispatcher> dispatcher;
  Fixture() {
    register_builtin_backends(registry);
    dispatcher = std::make_unique<Dispatcher>(registry, Policy{{"reference"}, {}, {}});
  }
};

void expect_matches_reference(const TinyBert& tiny, double tol) {
  Context ctx;
  Fixture fx;
  {
    TempDir dir;
    const auto tensors = tiny.tensors();
    tiny.write(dir.path().string(), tensors);
    std::unique_ptr<Encoder> enc;
    const Status st = Encoder::load(dir.path().string(), {}, ctx, &enc);
    ASSERT_TRUE(st.ok()) << st.to_string();
    ASSERT_EQ(enc->dim(), tiny.hidden);
    ASSERT_EQ(enc->max_seq_length(), tiny.max_seq_length);
    const auto seqs = random_sequences(tiny, 11);
    std::vector<float> out(seqs.size() * tiny.hidden, -99.0f);
    ASSERT_TRUE(enc->embed(seqs, *fx.dispatcher, ctx, out.data()).ok());
    const Reference ref(tiny, tensors);
    for (size_t s = 0; s < seqs.size(); ++s) {
      const std::vector<double> want = ref.embed(seqs[s]);
      double worst = 0;
      for (int i = 0; i < tiny.hidden; ++i) {
        worst = std::max(worst, std::fabs(out[s * tiny.hidden + i] - want[i]) /
                                    std::max(1.0, std::fabs(want[i])));
      }
      EXPECT_LT(worst, tol) << "sequence " << s << " (length " << seqs[s].size() << ")";
    }
    EXPECT_EQ(ctx.allocator().by_owner().at("model.activations").live_bytes, 0u);
  }
  EXPECT_TRUE(ctx.allocator().leaks().empty());
}

TEST(Encoder, MatchesADoubleReferenceForEveryPooling) {
  for (const char* pooling : {"mean", "cls", "max"}) {
    for (bool normalize : {true, false}) {
      SCOPED_TRACE(std::string(pooling) + (normalize ? " normalized" : ""));
      TinyBert tiny;
      tiny.pooling = pooling;
      tiny.normalize = normalize;
      expect_matches_reference(tiny, 2e-5);
    }
  }
}

TEST(Encoder, MatchesWithWiderHeadsAndBf16Weights) {
  TinyBert tiny;
  tiny.hidden = 64;
  tiny.heads = 4;
  tiny.intermediate = 96;
  tiny.layers = 3;
  tiny.dtype = "BF16";
  tiny.prefix = "bert.";
  expect_matches_reference(tiny, 5e-5);
}

TEST(Encoder, BatchingDoesNotChangeAnEmbedding) {
  Context ctx;
  Fixture fx;
  TempDir dir;
  TinyBert tiny;
  tiny.write(dir.path().string());
  std::unique_ptr<Encoder> enc;
  ASSERT_TRUE(Encoder::load(dir.path().string(), {}, ctx, &enc).ok());
  const auto seqs = random_sequences(tiny, 5);
  std::vector<float> batched(seqs.size() * tiny.hidden);
  ASSERT_TRUE(enc->embed(seqs, *fx.dispatcher, ctx, batched.data()).ok());
  for (size_t s = 0; s < seqs.size(); ++s) {
    std::vector<float> alone(tiny.hidden);
    ASSERT_TRUE(enc->embed({seqs[s]}, *fx.dispatcher, ctx, alone.data()).ok());
    for (int i = 0; i < tiny.hidden; ++i) {
      EXPECT_NEAR(alone[i], batched[s * tiny.hidden + i], 1e-5) << s << "," << i;
    }
  }
}

// embed_tokens() is the same run stopped before pooling: pooling its token
// states as the model says (and normalizing when it does) gives embed()'s
// rows, for every pooling.
TEST(Encoder, TokenStatesPoolToTheEmbedding) {
  for (const char* pooling : {"mean", "cls", "max"}) {
    for (bool normalize : {true, false}) {
      SCOPED_TRACE(std::string(pooling) + (normalize ? " normalized" : ""));
      Context ctx;
      Fixture fx;
      TempDir dir;
      TinyBert tiny;
      tiny.pooling = pooling;
      tiny.normalize = normalize;
      tiny.write(dir.path().string());
      std::unique_ptr<Encoder> enc;
      ASSERT_TRUE(Encoder::load(dir.path().string(), {}, ctx, &enc).ok());
      const auto seqs = random_sequences(tiny, 7);
      const int64_t h = tiny.hidden;
      int64_t tokens = 0;
      for (const auto& seq : seqs) tokens += static_cast<int64_t>(seq.size());
      std::vector<float> rows(seqs.size() * h), states(tokens * h, -99.0f);
      ASSERT_TRUE(enc->embed(seqs, *fx.dispatcher, ctx, rows.data()).ok());
      ASSERT_TRUE(enc->embed_tokens(seqs, *fx.dispatcher, ctx, states.data()).ok());
      const float* state = states.data();
      for (size_t s = 0; s < seqs.size(); ++s) {
        const int64_t n = static_cast<int64_t>(seqs[s].size());
        std::vector<double> pooled(h, std::string(pooling) == "max" ? -1e30 : 0.0);
        for (int64_t t = 0; t < n; ++t) {
          for (int64_t i = 0; i < h; ++i) {
            const double v = state[t * h + i];
            if (std::string(pooling) == "mean") pooled[i] += v / static_cast<double>(n);
            if (std::string(pooling) == "max") pooled[i] = std::max(pooled[i], v);
            if (std::string(pooling) == "cls" && t == 0) pooled[i] = v;
          }
        }
        double norm = 0;
        for (double v : pooled) norm += v * v;
        const double scale = normalize ? 1.0 / std::sqrt(norm) : 1.0;
        for (int64_t i = 0; i < h; ++i) {
          EXPECT_NEAR(pooled[i] * scale, rows[s * h + i], 1e-5) << "sequence " << s << ", " << i;
        }
        state += n * h;
      }
    }
  }
}

TEST(Encoder, RecordsAProfilerSpanPerStage) {
  Context ctx;
  Fixture fx;
  TempDir dir;
  TinyBert tiny;
  tiny.write(dir.path().string());
  std::unique_ptr<Encoder> enc;
  ASSERT_TRUE(Encoder::load(dir.path().string(), {}, ctx, &enc).ok());
  std::vector<float> out(tiny.hidden);
  ctx.profiler().clear();
  ASSERT_TRUE(enc->embed({{2, 7, 9, 3}}, *fx.dispatcher, ctx, out.data()).ok());
  std::map<std::string, int> names;
  std::map<std::string, std::string> stages;  // name -> Span::stage
  for (const Span& s : ctx.profiler().spans()) {
    names[s.name]++;
    stages[s.name] = s.stage;
  }
  for (const char* n : {"model.embeddings", "model.layer0.qkv_gemm", "model.layer1.ffn_in_gemm",
                        "model.layer1.ffn_out_gemm", "model.layer1.ffn_norm", "model.pooling"}) {
    EXPECT_EQ(names[n], 1) << n;
  }
  // A layer's stage says what it is without its layer number; others name none.
  EXPECT_EQ(stages["model.layer0.qkv_gemm"], "layer.qkv_gemm");
  EXPECT_EQ(stages["model.layer1.ffn_norm"], "layer.ffn_norm");
  EXPECT_EQ(stages["model.embeddings"], "");
  int attention = 0;
  for (const Span& s : ctx.profiler().spans()) attention += s.backend == "reference";
  EXPECT_EQ(attention, tiny.layers);  // the dispatcher's own spans
}

TEST(Encoder, RejectsBadSequencesWithoutWriting) {
  Context ctx;
  Fixture fx;
  TempDir dir;
  TinyBert tiny;
  tiny.write(dir.path().string());
  std::unique_ptr<Encoder> enc;
  ASSERT_TRUE(Encoder::load(dir.path().string(), {}, ctx, &enc).ok());
  std::vector<float> out(size_t{2} * tiny.hidden, 7.0f);
  struct Case {
    std::vector<std::vector<int32_t>> seqs;
    std::string expect;
  } cases[] = {
      {{{2, 3}, {}}, "sequence 1 has 0 tokens"},
      {{std::vector<int32_t>(tiny.max_seq_length + 1, 5)}, "13 tokens; must be 1..12"},
      {{{2, 40, 3}}, "token id 40 at position 1"},
      {{{-1}}, "token id -1"},
  };
  for (const Case& c : cases) {
    const Status st = enc->embed(c.seqs, *fx.dispatcher, ctx, out.data());
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find(c.expect), std::string::npos) << st.message();
  }
  for (float v : out) EXPECT_EQ(v, 7.0f);
  EXPECT_TRUE(enc->embed({}, *fx.dispatcher, ctx, nullptr).ok());
}

TEST(Encoder, LoadErrorsNameTheFileAndTheProblem) {
  Context ctx;
  std::unique_ptr<Encoder> enc;
  Status st = Encoder::load("/nonexistent/model", {}, ctx, &enc);
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_NE(st.message().find("/nonexistent/model"), std::string::npos);
  {
    TempDir dir;
    TinyBert tiny;
    auto tensors = tiny.tensors();
    tensors[0].shape = {41, 8};  // word embeddings: config says vocab_size 40
    tensors[0].values.resize(size_t{41} * 8);
    tiny.write(dir.path().string(), tensors);
    st = Encoder::load(dir.path().string(), {}, ctx, &enc);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("model.safetensors: tensor 'embeddings.word_embeddings.weight' "
                                "has shape [41, 8] but config.json (vocab_size, hidden_size) "
                                "implies [40, 8]"),
              std::string::npos)
        << st.message();
  }
  {
    TempDir dir;
    TinyBert().write(dir.path().string());
    testing::write_file(dir.file("model.safetensors"),
                        std::string("\x10\0\0\0\0\0\0\0{\"a\":", 13));
    st = Encoder::load(dir.path().string(), {}, ctx, &enc);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("model.safetensors"), std::string::npos) << st.message();
  }
  EXPECT_EQ(enc, nullptr);
  EXPECT_TRUE(ctx.allocator().leaks().empty());
}

// Issue 48: a sharded checkpoint (model.safetensors.index.json naming each
// tensor's shard, as every embedder over ~1B parameters ships) embeds
// exactly as the one file holding the same tensors; a hostile index is
// named.
TEST(Encoder, ShardedWeightsEmbedAsOneFile) {
  Context ctx;
  TinyBert tiny;
  const std::vector<FakeTensor> tensors = tiny.tensors();
  TempDir whole, sharded;
  tiny.write(whole.path().string(), tensors);
  tiny.write(sharded.path().string(), tensors);
  std::filesystem::remove(sharded.file("model.safetensors"));
  // Two shards: the first third of the tensors, then the rest.
  const size_t cut = tensors.size() / 3;
  const std::vector<FakeTensor> first(tensors.begin(), tensors.begin() + cut);
  const std::vector<FakeTensor> second(tensors.begin() + cut, tensors.end());
  testing::write_file(sharded.file("model-00001-of-00002.safetensors"),
                      testing::make_safetensors(first));
  testing::write_file(sharded.file("model-00002-of-00002.safetensors"),
                      testing::make_safetensors(second));
  nlohmann::json index = {{"metadata", {{"total_size", 0}}},
                          {"weight_map", nlohmann::json::object()}};
  for (size_t i = 0; i < tensors.size(); ++i) {
    index["weight_map"][tensors[i].name] =
        i < cut ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
  }
  testing::write_file(sharded.file("model.safetensors.index.json"), index.dump());

  const std::vector<std::vector<int32_t>> ids = {{1, 5, 9, 2}, {1, 7, 3, 3, 8, 2}};
  std::vector<float> want(ids.size() * tiny.hidden), got(ids.size() * tiny.hidden);
  Fixture fx;
  for (auto [dir, rows] : {std::pair{&whole, &want}, std::pair{&sharded, &got}}) {
    std::unique_ptr<Encoder> enc;
    const Status st = Encoder::load(dir->path().string(), {}, ctx, &enc);
    ASSERT_TRUE(st.ok()) << st.to_string();
    ASSERT_TRUE(enc->embed(ids, *fx.dispatcher, ctx, rows->data()).ok());
  }
  EXPECT_EQ(got, want);  // the same tensors, the same arithmetic: bit for bit

  // A shard outside the folder, and a tensor its shard does not hold.
  std::unique_ptr<Encoder> enc;
  index["weight_map"][tensors[0].name] = "../model.safetensors";
  testing::write_file(sharded.file("model.safetensors.index.json"), index.dump());
  testing::expect_status(
      Encoder::load(sharded.path().string(), {}, ctx, &enc), StatusCode::kInvalidArgument,
      {"model.safetensors.index.json", "weight_map[", "shard file in the same folder"});
  index["weight_map"][tensors[0].name] = "model-00002-of-00002.safetensors";
  testing::write_file(sharded.file("model.safetensors.index.json"), index.dump());
  testing::expect_status(Encoder::load(sharded.path().string(), {}, ctx, &enc),
                         StatusCode::kInvalidArgument,
                         {"model-00002-of-00002.safetensors, which has no such tensor"});
  EXPECT_TRUE(ctx.allocator().leaks().empty());
}

}  // namespace
}  // namespace tessera::model
