#include "record/example_view.h"

#include <cstddef>
#include <cstdint>

namespace imgpipe {
namespace {

// Tags of example.proto's fields (field number << 3 | wire type), one byte each.
constexpr uint8_t kField1Delimited = 0x0a;  // Example.features, Features.feature, entry key,
                                            // Feature.bytes_list, every list's packed values
constexpr uint8_t kField2Delimited = 0x12;  // entry value, Feature.float_list
constexpr uint8_t kField3Delimited = 0x1a;  // Feature.int64_list
constexpr uint8_t kField1Varint = 0x08;     // Int64List.value, unpacked
constexpr uint8_t kField1Fixed32 = 0x0d;    // FloatList.value, unpacked

// More features than this are left to protobuf (the key check is quadratic).
constexpr size_t kMaxFeatures = 256;

// A cursor over protobuf wire data. Each read returns false, consuming nothing useful,
// when the data is not in the form asked for.
class Wire {
 public:
  explicit Wire(std::string_view data) : data_(data) {}

  bool done() const { return pos_ == data_.size(); }

  // A one-byte tag equal to `tag`.
  bool Tag(uint8_t tag) {
    if (done() || static_cast<uint8_t>(data_[pos_]) != tag) return false;
    ++pos_;
    return true;
  }

  // The next one-byte tag, whatever it is.
  bool AnyTag(uint8_t* tag) {
    if (done() || static_cast<uint8_t>(data_[pos_]) >= 0x80) return false;
    *tag = static_cast<uint8_t>(data_[pos_++]);
    return true;
  }

  // A varint of at most `max_bytes` bytes whose value fits in 64 bits.
  bool Varint(uint64_t* value, size_t max_bytes = 10) {
    uint64_t v = 0;
    for (size_t i = 0; i < max_bytes && !done(); ++i) {
      auto byte = static_cast<uint8_t>(data_[pos_++]);
      if (i == 9 && byte > 1) return false;  // bits beyond the 64th
      v |= uint64_t{byte & 0x7fu} << (7 * i);
      if (byte < 0x80) {
        *value = v;
        return true;
      }
    }
    return false;
  }

  // A length (at most INT32_MAX, as protobuf reads it) and that many bytes.
  bool Delimited(std::string_view* out) {
    uint64_t length = 0;
    if (!Varint(&length, 5) || length > INT32_MAX || length > data_.size() - pos_) return false;
    *out = data_.substr(pos_, length);
    pos_ += length;
    return true;
  }

  bool Fixed32() {
    if (data_.size() - pos_ < 4) return false;
    pos_ += 4;
    return true;
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// Whether `packed` is a whole number of varints.
bool AllVarints(std::string_view packed) {
  Wire w(packed);
  uint64_t v = 0;
  while (!w.done()) {
    if (!w.Varint(&v)) return false;
  }
  return true;
}

// Whether `list`, a BytesList (kind 1), FloatList (2) or Int64List (3), is in a form
// protobuf parses: values unpacked or (numbers) packed, in any mix.
bool ListIsPlain(int kind, std::string_view list) {
  Wire w(list);
  std::string_view bytes;
  while (!w.done()) {
    uint8_t tag = 0;
    if (!w.AnyTag(&tag)) return false;
    if (tag == kField1Delimited) {
      if (!w.Delimited(&bytes)) return false;
      if (kind == 2 && bytes.size() % 4 != 0) return false;
      if (kind == 3 && !AllVarints(bytes)) return false;
    } else if (kind == 2 && tag == kField1Fixed32) {
      if (!w.Fixed32()) return false;
    } else if (kind == 3 && tag == kField1Varint) {
      uint64_t v = 0;
      if (!w.Varint(&v)) return false;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<ExampleView> ExampleView::Scan(std::string_view data) {
  if (data.size() > INT32_MAX) return std::nullopt;
  // 1. Example: the features, once.
  Wire example(data);
  std::string_view features;
  if (!example.Tag(kField1Delimited) || !example.Delimited(&features) || !example.done()) {
    return std::nullopt;
  }
  // 2. Features: map entries, each a key (ASCII, not seen before) then a value.
  ExampleView view;
  Wire entries(features);
  while (!entries.done()) {
    std::string_view entry, value;
    Feature f;
    if (!entries.Tag(kField1Delimited) || !entries.Delimited(&entry)) return std::nullopt;
    Wire e(entry);
    if (!e.Tag(kField1Delimited) || !e.Delimited(&f.key) || !e.Tag(kField2Delimited) ||
        !e.Delimited(&value) || !e.done()) {
      return std::nullopt;
    }
    for (char c : f.key) {
      if (static_cast<uint8_t>(c) >= 0x80) return std::nullopt;  // protobuf checks UTF-8
    }
    if (view.features_.size() >= kMaxFeatures || view.Find(f.key)) return std::nullopt;
    // 3. Feature: empty, or one list.
    Wire feature(value);
    uint8_t tag = 0;
    if (!feature.done()) {
      if (!feature.AnyTag(&tag) || !feature.Delimited(&f.list) || !feature.done()) {
        return std::nullopt;
      }
      int kind = tag == kField1Delimited ? 1 : tag == kField2Delimited ? 2
                 : tag == kField3Delimited ? 3 : 0;
      if (kind == 0 || !ListIsPlain(kind, f.list)) return std::nullopt;
      f.kind = kind == 1 ? Kind::kBytes : kind == 2 ? Kind::kFloat : Kind::kInt64;
    }
    view.features_.push_back(f);
  }
  return view;
}

const ExampleView::Feature* ExampleView::Find(std::string_view key) const {
  for (const Feature& f : features_) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

std::optional<std::string_view> ExampleView::FirstBytes(std::string_view key) const {
  const Feature* f = Find(key);
  if (!f || f->kind != Kind::kBytes) return std::nullopt;
  Wire w(f->list);
  std::string_view value;
  if (!w.Tag(kField1Delimited) || !w.Delimited(&value)) return std::nullopt;  // empty list
  return value;
}

std::optional<int64_t> ExampleView::FirstInt64(std::string_view key) const {
  const Feature* f = Find(key);
  if (!f || f->kind != Kind::kInt64) return std::nullopt;
  Wire w(f->list);
  uint64_t v = 0;
  while (!w.done()) {  // Scan checked the form
    if (w.Tag(kField1Varint)) {
      w.Varint(&v);
      return static_cast<int64_t>(v);
    }
    std::string_view packed;
    if (!w.Tag(kField1Delimited) || !w.Delimited(&packed)) return std::nullopt;
    if (!packed.empty()) {
      Wire p(packed);
      p.Varint(&v);
      return static_cast<int64_t>(v);
    }
  }
  return std::nullopt;
}

}  // namespace imgpipe
