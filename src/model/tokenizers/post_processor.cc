#include "model/tokenizers/post_processor.h"

#include <algorithm>

#include "model/tokenizer_unicode.h"
#include "model/tokenizer_utf8.h"
#include "runtime/json_input.h"

namespace tessera::model::tokenizers {

using nlohmann::json;

namespace {
constexpr const char* kSupportedPostProcessors =
    "\"BertProcessing\", \"RobertaProcessing\", \"TemplateProcessing\", \"ByteLevel\", "
    "\"Sequence\" of them or null";
constexpr char32_t kByteLevelSpace = 0x120;  // 'Ġ', the byte-level character of ' '

bool is_space_char(char32_t c) { return c == kByteLevelSpace || unicode::is_whitespace(c); }
}  // namespace

class PostProcessorReader {
 public:
  PostProcessorReader(const JsonFields& f, PostProcessor* p) : f_(f), p_(p) {}

  Status read(const json& pp, const std::string& field) {
    const std::string type = JsonFields::type_of(pp);
    const std::string prefix = field + ".";
    if (type == "BertProcessing" || type == "RobertaProcessing") {
      int32_t ids[2] = {0, 0};
      const char* keys[2] = {"cls", "sep"};
      for (int i = 0; i < 2; ++i) {
        const auto pair = pp.find(keys[i]);
        if (pair == pp.end() || !pair->is_array() || pair->size() != 2) {
          return f_.error(prefix + keys[i], "must be [token, id]");
        }
        TESSERA_RETURN_IF_ERROR(f_.get_id((*pair)[1], prefix + keys[i] + "[1]", &ids[i]));
      }
      const bool bert = type == "BertProcessing";
      p_->single_ = {special(ids[0], 0), seq(0, 0), special(ids[1], 0)};
      if (bert) {
        p_->pair_ = {special(ids[0], 0), seq(0, 0), special(ids[1], 0), seq(1, 1),
                     special(ids[1], 1)};
      } else {
        p_->pair_ = {special(ids[0], 0), seq(0, 0), special(ids[1], 0),
                     special(ids[1], 0), seq(1, 0), special(ids[1], 0)};
        bool trim = true;
        TESSERA_RETURN_IF_ERROR(f_.get_bool(pp, prefix, "trim_offsets", &trim));
        TESSERA_RETURN_IF_ERROR(
            f_.get_bool(pp, prefix, "add_prefix_space", &p_->add_prefix_space_));
        p_->trim_ = p_->trim_ || trim;
      }
      has_template_ = true;
      add_description(type);
      return Status::Ok();
    }
    if (type == "TemplateProcessing") {
      TESSERA_RETURN_IF_ERROR(read_template(pp, prefix, "single", &p_->single_));
      TESSERA_RETURN_IF_ERROR(read_template(pp, prefix, "pair", &p_->pair_));
      has_template_ = true;
      add_description(type);
      return Status::Ok();
    }
    if (type == "ByteLevel") {
      bool trim = true;
      TESSERA_RETURN_IF_ERROR(f_.get_bool(pp, prefix, "trim_offsets", &trim));
      bool add_prefix_space = true;
      TESSERA_RETURN_IF_ERROR(f_.get_bool(pp, prefix, "add_prefix_space", &add_prefix_space));
      p_->trim_ = p_->trim_ || trim;
      p_->add_prefix_space_ = add_prefix_space;
      add_description("ByteLevel");
      return Status::Ok();
    }
    if (type == "Sequence") {
      const auto list = pp.find("processors");
      if (list == pp.end() || !list->is_array()) {
        return f_.error(prefix + "processors", "must be an array");
      }
      for (size_t i = 0; i < list->size(); ++i) {
        TESSERA_RETURN_IF_ERROR(read((*list)[i], prefix + "processors[" + std::to_string(i) + "]"));
      }
      return Status::Ok();
    }
    return f_.unsupported_value(field, pp.is_object() ? pp.value("type", json()) : pp,
                                kSupportedPostProcessors);
  }

  // A processor without a template (ByteLevel alone, or none) adds no
  // specials, as HF: the sequences as they are, B's type ids 1.
  Status finish() {
    if (!has_template_) {
      p_->single_ = {seq(0, 0)};
      p_->pair_ = {seq(0, 0), seq(1, 1)};
      add_description("no special tokens");
    }
    p_->single_specials_ = count_specials(p_->single_);
    p_->pair_specials_ = count_specials(p_->pair_);
    const auto is_a = [](const PostProcessor::Piece& piece) { return piece.sequence == 0; };
    const auto a = std::find_if(p_->single_.begin(), p_->single_.end(), is_a);
    if (a == p_->single_.end() || std::count_if(a + 1, p_->single_.end(), is_a) != 0) {
      return f_.unsupported_field("post_processor.single",
                                  "must hold sequence $A exactly once ([CLS] $A [SEP], "
                                  "$A <|endoftext|>), the text a window is framed around");
    }
    SequenceFrame& frame = p_->single_frame_;
    for (auto it = p_->single_.begin(); it != p_->single_.end(); ++it) {
      if (it->sequence >= 0) continue;
      auto& side = it < a ? frame.prefix : frame.suffix;
      side.insert(side.end(), it->ids.begin(), it->ids.end());
    }
    if (frame.specials() > 0) {
      p_->first_special_ = frame.prefix.empty() ? frame.suffix.front() : frame.prefix.front();
      p_->last_special_ = frame.suffix.empty() ? frame.prefix.back() : frame.suffix.back();
    }
    return Status::Ok();
  }

 private:
  static PostProcessor::Piece special(int32_t id, uint32_t type_id) { return {-1, {id}, type_id}; }
  static PostProcessor::Piece seq(int s, uint32_t type_id) { return {s, {}, type_id}; }
  static size_t count_specials(const std::vector<PostProcessor::Piece>& t) {
    size_t n = 0;
    for (const auto& piece : t) n += piece.ids.size();
    return n;
  }
  void add_description(const std::string& type) {
    p_->description_ += (p_->description_.empty() ? "" : " + ") + type;
  }

  Status read_template(const json& pp, const std::string& prefix, const char* key,
                       std::vector<PostProcessor::Piece>* out) {
    const std::string field = prefix + key;
    const auto t = pp.find(key);
    if (t == pp.end() || !t->is_array()) return f_.error(field, "must be an array of pieces");
    out->clear();
    for (size_t i = 0; i < t->size(); ++i) {
      const json& piece = (*t)[i];
      const std::string at = field + "[" + std::to_string(i) + "]";
      const json* body = nullptr;
      bool is_sequence = false;
      if (piece.is_object() && piece.contains("Sequence")) {
        body = &piece["Sequence"];
        is_sequence = true;
      } else if (piece.is_object() && piece.contains("SpecialToken")) {
        body = &piece["SpecialToken"];
      }
      if (body == nullptr || !body->is_object() || !body->contains("id") ||
          !(*body)["id"].is_string()) {
        return f_.error(at, "must be {\"Sequence\": {...}} or {\"SpecialToken\": {...}}, not " +
                                json_input::render(piece));
      }
      PostProcessor::Piece p;
      const std::string name = (*body)["id"].get<std::string>();
      if (const auto type_id = body->find("type_id"); type_id != body->end()) {
        int32_t v = 0;
        TESSERA_RETURN_IF_ERROR(f_.get_id(*type_id, at + ".type_id", &v));
        p.type_id = static_cast<uint32_t>(v);
      }
      if (is_sequence) {
        if (name != "A" && name != "B") {
          return f_.error(at + ".Sequence.id",
                          "must be \"A\" or \"B\", not \"" + json_input::clip(name) + "\"");
        }
        p.sequence = name == "A" ? 0 : 1;
      } else {
        const std::string entry = prefix + "special_tokens[\"" + json_input::clip(name) + "\"]";
        const auto st = pp.find("special_tokens");
        if (st == pp.end() || !st->is_object() || !st->contains(name) || !(*st)[name].is_object() ||
            !(*st)[name].contains("ids") || !(*st)[name]["ids"].is_array()) {
          return f_.error(entry + ".ids", "must be an array of ids (the template names \"" +
                                              json_input::clip(name) + "\")");
        }
        const json& ids = (*st)[name]["ids"];
        for (size_t k = 0; k < ids.size(); ++k) {
          int32_t id = 0;
          TESSERA_RETURN_IF_ERROR(
              f_.get_id(ids[k], entry + ".ids[" + std::to_string(k) + "]", &id));
          p.ids.push_back(id);
        }
      }
      out->push_back(std::move(p));
    }
    return Status::Ok();
  }

  const JsonFields& f_;
  PostProcessor* p_;
  bool has_template_ = false;
};

Status PostProcessor::read(const JsonFields& f, const json& root, PostProcessor* out) {
  PostProcessor p;
  PostProcessorReader reader(f, &p);
  const auto it = root.find("post_processor");
  if (it != root.end() && !it->is_null()) {
    TESSERA_RETURN_IF_ERROR(reader.read(*it, "post_processor"));
  }
  TESSERA_RETURN_IF_ERROR(reader.finish());
  if (p.trim_) p.description_ += " (trim_offsets)";
  *out = std::move(p);
  return Status::Ok();
}

void PostProcessor::trim_offsets(const std::function<std::string_view(size_t)>& text_of,
                                 std::vector<TokenSpan>* seq) const {
  if (!trim_) return;
  for (size_t i = 0; i < seq->size(); ++i) {
    TokenSpan& t = (*seq)[i];
    const std::string_view token = text_of(i);
    const std::string_view* text = &token;
    if (text->empty()) continue;
    // Leading and trailing space characters of the token's text, counted in
    // characters; each stands for one byte (' ') of the original text.
    size_t leading = 0, trailing = 0;
    bool in_lead = true;
    size_t run = 0;
    for (size_t k = 0; k < text->size();) {
      int len = 0;
      const char32_t c = decode_utf8(text->data() + k, &len);
      k += static_cast<size_t>(len);
      if (is_space_char(c)) {
        ++run;
        if (in_lead) ++leading;
      } else {
        in_lead = false;
        run = 0;
      }
    }
    trailing = run;
    if (leading == 0 && trailing == 0) continue;
    if (leading > 0) {
      const bool is_first = i == 0 || t.begin == 0;
      if (is_first && add_prefix_space_ && leading == 1) leading = 0;
      t.begin = std::min<int64_t>(t.begin + static_cast<int64_t>(leading), t.end);
    }
    if (trailing > 0 && t.end >= static_cast<int64_t>(trailing)) {
      t.end = std::max<int64_t>(t.end - static_cast<int64_t>(trailing), t.begin);
    }
  }
}

void PostProcessor::apply(const std::vector<TokenSpan>& a, const std::vector<TokenSpan>* b,
                          std::vector<TokenSpan>* out, std::vector<int32_t>* type_ids) const {
  out->clear();
  if (type_ids) type_ids->clear();
  for (const Piece& piece : b == nullptr ? single_ : pair_) {
    if (piece.sequence < 0) {
      for (int32_t id : piece.ids) {
        out->push_back({id, 0, 0, false});
        if (type_ids) type_ids->push_back(static_cast<int32_t>(piece.type_id));
      }
      continue;
    }
    const std::vector<TokenSpan>* s = piece.sequence == 0 ? &a : b;
    if (s == nullptr) continue;
    out->insert(out->end(), s->begin(), s->end());
    if (type_ids) type_ids->insert(type_ids->end(), s->size(), static_cast<int32_t>(piece.type_id));
  }
}

}  // namespace tessera::model::tokenizers
