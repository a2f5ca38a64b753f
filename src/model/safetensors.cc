#include "model/safetensors.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "runtime/bounded_text.h"
#include "runtime/json_input.h"
#include "runtime/regular_file.h"

namespace tessera::model {

namespace {

using nlohmann::json;

constexpr size_t kHeaderLengthBytes = 8;

struct DTypeInfo {
  const char* name;
  size_t size;
  std::optional<DType> float_dtype;
};
// Every dtype of the safetensors format (sub-byte types excluded).
constexpr DTypeInfo kDTypes[] = {
    {"BOOL", 1, {}},    {"U8", 1, {}},           {"I8", 1, {}},
    {"F8_E5M2", 1, {}}, {"F8_E4M3", 1, {}},      {"I16", 2, {}},
    {"U16", 2, {}},     {"F16", 2, DType::kF16}, {"BF16", 2, DType::kBF16},
    {"I32", 4, {}},     {"U32", 4, {}},          {"F32", 4, DType::kF32},
    {"F64", 8, {}},     {"I64", 8, {}},          {"U64", 8, {}},
};

const DTypeInfo* find_dtype(std::string_view name) {
  for (const DTypeInfo& d : kDTypes) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

std::string known_dtypes() {
  std::string s;
  for (const DTypeInfo& d : kDTypes) s += (s.empty() ? "" : ", ") + std::string(d.name);
  return s;
}

}  // namespace

int64_t SafeTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string SafeTensor::shape_string() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Status SafetensorsFile::open(const std::string& path, std::unique_ptr<SafetensorsFile>* out) {
  constexpr std::string_view kIndex = ".index.json";
  if (path.size() > kIndex.size() &&
      path.compare(path.size() - kIndex.size(), kIndex.size(), kIndex) == 0) {
    return open_index(path, out);
  }
  return open_one(path, out);
}

Status SafetensorsFile::open_index(const std::string& path, std::unique_ptr<SafetensorsFile>* out) {
  json index;
  TESSERA_RETURN_IF_ERROR(json_input::parse_file(path, &index));
  const auto map = index.is_object() ? index.find("weight_map") : index.end();
  if (map == index.end() || !map->is_object() || map->empty()) {
    return invalid_argument(path +
                            ": field 'weight_map' must be a non-empty object mapping "
                            "tensor names to shard files");
  }
  std::unique_ptr<SafetensorsFile> f(new SafetensorsFile());
  f->path_ = path;
  const std::string dir = path.substr(0, path.rfind('/') + 1);
  std::map<std::string, size_t> shard_of;  // file name -> index in shards_
  for (const auto& [name, file] : map->items()) {
    const std::string where = path + ": weight_map[" + quote_bounded(name) + "]";
    if (!file.is_string() || file.get<std::string>().empty() ||
        file.get<std::string>().find('/') != std::string::npos ||
        file.get<std::string>().front() == '.') {
      return invalid_argument(where + " = " + json_input::render(file) +
                              " must be the name of a shard file in the same folder");
    }
    const std::string shard = file.get<std::string>();
    auto it = shard_of.find(shard);
    if (it == shard_of.end()) {
      std::unique_ptr<SafetensorsFile> s;
      TESSERA_RETURN_IF_ERROR(open_one(dir + shard, &s));
      f->size_ += s->mapped_bytes();
      it = shard_of.emplace(shard, f->shards_.size()).first;
      f->shards_.push_back(std::move(s));
    }
    const SafeTensor* t = f->shards_[it->second]->find(name);
    if (t == nullptr) {
      std::string message = where;
      message += " names " + dir;
      message += shard + ", which has no such tensor";
      return invalid_argument(message);
    }
    f->tensors_.push_back(*t);
  }
  std::sort(f->tensors_.begin(), f->tensors_.end(),
            [](const SafeTensor& a, const SafeTensor& b) { return a.name < b.name; });
  if (const auto meta = index.find("metadata"); meta != index.end() && meta->is_object()) {
    for (const auto& [k, v] : meta->items()) {
      f->metadata_[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
  }
  *out = std::move(f);
  return Status::Ok();
}

const SafetensorsFile& SafetensorsFile::owner(const SafeTensor& t) const {
  for (const auto& s : shards_) {
    if (t.data >= s->base_ && t.data <= s->base_ + s->size_) return *s;
  }
  return *this;
}

Status SafetensorsFile::open_one(const std::string& path, std::unique_ptr<SafetensorsFile>* out) {
  std::unique_ptr<SafetensorsFile> f(new SafetensorsFile());
  f->path_ = path;
  // Checked before mapping: a FIFO in its place would block a plain open().
  UniqueFd fd;
  uint64_t file_bytes = 0;
  if (Status s = open_regular_file(path, &fd, &file_bytes); !s.ok()) {
    return Status(s.code(), path + ": " + s.message());
  }
  const auto size = static_cast<size_t>(file_bytes);
  if (size < kHeaderLengthBytes) {
    return invalid_argument(path + ": file is " + std::to_string(size) +
                            " bytes; a safetensors file starts with an 8-byte header length");
  }
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (map == MAP_FAILED) {
    return internal_error(path + ": mmap of " + std::to_string(size) +
                          " bytes failed: " + std::strerror(errno));
  }
  f->base_ = static_cast<const uint8_t*>(map);
  f->size_ = size;
  TESSERA_RETURN_IF_ERROR(f->parse_header());  // f's destructor unmaps on error
  *out = std::move(f);
  return Status::Ok();
}

SafetensorsFile::~SafetensorsFile() {
  if (base_ != nullptr) ::munmap(const_cast<uint8_t*>(base_), size_);
}

Status SafetensorsFile::parse_header() {
  uint64_t header_len = 0;
  for (size_t i = 0; i < kHeaderLengthBytes; ++i) {
    header_len |= static_cast<uint64_t>(base_[i]) << (8 * i);  // little-endian
  }
  const uint64_t room = size_ - kHeaderLengthBytes;
  if (header_len > room || header_len > kMaxHeaderBytes) {
    return invalid_argument(
        path_ + ": header length " + std::to_string(header_len) + " bytes exceeds " +
        (header_len > room ? "the " + std::to_string(room) + " bytes left in the file (truncated?)"
                           : "the limit of " + std::to_string(kMaxHeaderBytes)));
  }
  const char* text = reinterpret_cast<const char*>(base_ + kHeaderLengthBytes);
  json header;
  TESSERA_RETURN_IF_ERROR(
      json_input::parse(std::string_view(text, header_len), path_ + ": header", &header));
  if (!header.is_object()) {
    return invalid_argument(path_ + ": header must be a JSON object, got " + header.type_name());
  }
  const uint8_t* data = base_ + kHeaderLengthBytes + header_len;
  const uint64_t data_size = room - header_len;

  for (const auto& [name, entry] : header.items()) {
    const std::string where = path_ + ": tensor " + quote_bounded(name);
    if (name == "__metadata__") {
      if (!entry.is_object()) return invalid_argument(path_ + ": __metadata__ must be an object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) {
          return invalid_argument(path_ + ": __metadata__." + json_input::clip(key) +
                                  " must be a string");
        }
        metadata_[key] = value.get<std::string>();
      }
      continue;
    }
    if (!entry.is_object()) return invalid_argument(where + " must be a JSON object");
    const auto dtype_it = entry.find("dtype");
    const auto shape_it = entry.find("shape");
    const auto offsets_it = entry.find("data_offsets");
    if (dtype_it == entry.end() || !dtype_it->is_string()) {
      return invalid_argument(where + ": missing string field 'dtype'");
    }
    if (shape_it == entry.end() || !shape_it->is_array()) {
      return invalid_argument(where + ": missing array field 'shape'");
    }
    if (offsets_it == entry.end() || !offsets_it->is_array() || offsets_it->size() != 2 ||
        !(*offsets_it)[0].is_number_unsigned() || !(*offsets_it)[1].is_number_unsigned()) {
      return invalid_argument(where + ": 'data_offsets' must be two non-negative integers");
    }
    SafeTensor t;
    t.name = name;
    t.dtype = dtype_it->get<std::string>();
    const DTypeInfo* info = find_dtype(t.dtype);
    if (info == nullptr) {
      return invalid_argument(where + ": unknown dtype " + quote_bounded(t.dtype) +
                              " (known: " + known_dtypes() + ")");
    }
    t.float_dtype = info->float_dtype;
    if (shape_it->size() > kMaxRank) {
      return invalid_argument(where + ": rank " + std::to_string(shape_it->size()) + " exceeds " +
                              std::to_string(kMaxRank));
    }
    uint64_t expected = info->size;
    // The element count must fit int64 as well as the byte count fitting
    // uint64: a 1-byte dtype of shape [2^62, 3, 0] has 0 bytes, but numel()
    // multiplies its dims in int64 (found by fuzzing, issue 19).
    int64_t elements = 1;
    bool overflow = false;
    for (const json& dim : *shape_it) {
      if (!dim.is_number_unsigned()) {
        return invalid_argument(where + ": shape " + json_input::render(*shape_it) +
                                " must hold non-negative integers");
      }
      const uint64_t d = dim.get<uint64_t>();
      overflow |= d > static_cast<uint64_t>(INT64_MAX) ||
                  __builtin_mul_overflow(expected, d, &expected) ||
                  __builtin_mul_overflow(elements, static_cast<int64_t>(d), &elements);
      t.shape.push_back(static_cast<int64_t>(d));
    }
    const uint64_t begin = (*offsets_it)[0].get<uint64_t>();
    const uint64_t end = (*offsets_it)[1].get<uint64_t>();
    if (begin > end || end > data_size) {
      return invalid_argument(where + ": data_offsets [" + std::to_string(begin) + ", " +
                              std::to_string(end) + "] lie outside the data section of " +
                              std::to_string(data_size) + " bytes");
    }
    if (overflow || expected != end - begin) {
      return invalid_argument(
          where + ": dtype " + t.dtype + " x shape " + json_input::render(*shape_it) + " needs " +
          (overflow ? "more than 2^63 elements or 2^64" : std::to_string(expected)) +
          " bytes but data_offsets span " + std::to_string(end - begin));
    }
    t.data = data + begin;
    t.bytes = end - begin;
    tensors_.push_back(std::move(t));
  }

  // No two tensors may share a byte (zero-sized tensors own no bytes).
  std::vector<const SafeTensor*> by_offset;
  for (const SafeTensor& t : tensors_) {
    if (t.bytes > 0) by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const SafeTensor* a, const SafeTensor* b) { return a->data < b->data; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const SafeTensor& prev = *by_offset[i - 1];
    const SafeTensor& cur = *by_offset[i];
    if (cur.data < prev.data + prev.bytes) {
      return invalid_argument(path_ + ": tensors " + quote_bounded(prev.name) + " and " +
                              quote_bounded(cur.name) + " overlap (data_offsets " +
                              std::to_string(prev.data - data) + ".." +
                              std::to_string(prev.data - data + prev.bytes) + " and " +
                              std::to_string(cur.data - data) + "..)");
    }
  }
  std::sort(tensors_.begin(), tensors_.end(),
            [](const SafeTensor& a, const SafeTensor& b) { return a.name < b.name; });
  return Status::Ok();
}

const SafeTensor* SafetensorsFile::find(std::string_view name) const {
  const auto it =
      std::lower_bound(tensors_.begin(), tensors_.end(), name,
                       [](const SafeTensor& t, std::string_view n) { return t.name < n; });
  return it != tensors_.end() && it->name == name ? &*it : nullptr;
}

void SafetensorsFile::release(const SafeTensor& t) const {
  if (!shards_.empty()) return owner(t).release(t);
  // Offsets from the mapping's start, which mmap aligned to a page.
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = static_cast<size_t>(t.data - base_);
  const size_t first = (begin + page - 1) / page * page;
  const size_t last = (begin + t.bytes) / page * page;
  // Advice only: a failure leaves the pages resident, which is still correct.
  if (last > first) {
    ::madvise(const_cast<uint8_t*>(base_) + first, last - first, MADV_DONTNEED);
  }
}

Status SafetensorsFile::read_f32(const SafeTensor& t, float* dst) const {
  if (!t.float_dtype) {
    return unsupported(owner(t).path_ + ": tensor " + quote_bounded(t.name) + " has dtype " +
                       t.dtype + "; only F32, F16 and BF16 convert to f32");
  }
  const int64_t n = t.numel();
  switch (*t.float_dtype) {
    case DType::kF32:
      // memcpy's pointers must be valid even for 0 bytes, and an empty
      // tensor's destination may be null (found by fuzzing, issue 19).
      if (t.bytes > 0) std::memcpy(dst, t.data, t.bytes);
      break;
    case DType::kF16:
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, t.data + 2 * i, sizeof h);
        dst[i] = *t.float_dtype == DType::kF16 ? f16_to_f32(h) : bf16_to_f32(h);
      }
      break;
  }
  return Status::Ok();
}

}  // namespace tessera::model
