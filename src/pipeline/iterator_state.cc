#include "pipeline/iterator_state.h"

#include <cstring>

#include "util/error.h"

namespace imgpipe::pipeline {
namespace {

// Serialized form (all counts and lengths are LEB128 varints):
//   "IPST"  varint version (1)  varint count
//   count x { varint key_length, key bytes, varint value_length, value bytes }
// Keys are in ascending order and unique. Integers are stored as 8-byte little-endian
// values; StateEncoder fields are zig-zag varints (integers) or varint-length-prefixed
// bytes.
constexpr char kMagic[4] = {'I', 'P', 'S', 'T'};
constexpr uint64_t kVersion = 1;

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// Reads a varint from the front of *in; false when truncated or longer than 64 bits.
bool GetVarint(std::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64 && !in->empty(); shift += 7) {
    uint64_t byte = static_cast<unsigned char>(in->front());
    in->remove_prefix(1);
    if (shift == 63 && byte > 1) return false;  // would overflow 64 bits
    result |= (byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

// Reads a varint length and that many bytes from the front of *in.
bool GetLengthPrefixed(std::string_view* in, std::string_view* out) {
  uint64_t length = 0;
  if (!GetVarint(in, &length) || length > in->size()) return false;
  *out = in->substr(0, length);
  in->remove_prefix(length);
  return true;
}

std::string EncodeFixed64(int64_t value) {
  std::string out(8, '\0');
  auto u = static_cast<uint64_t>(value);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(u >> (8 * i));
  return out;
}

uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

}  // namespace

void IteratorState::PutInt(const std::string& key, int64_t value) {
  values_[key] = EncodeFixed64(value);
}

void IteratorState::PutBytes(const std::string& key, std::string value) {
  values_[key] = std::move(value);
}

int64_t IteratorState::GetInt(const std::string& key) const {
  const std::string& v = GetBytes(key);
  if (v.size() != 8) {
    throw Error("iterator state: value of '" + key + "' is not an integer (" +
                std::to_string(v.size()) + " bytes)");
  }
  uint64_t u = 0;
  for (int i = 0; i < 8; ++i) u |= uint64_t{static_cast<unsigned char>(v[i])} << (8 * i);
  return static_cast<int64_t>(u);
}

const std::string& IteratorState::GetBytes(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) {
    throw Error("iterator state: missing key '" + key +
                "' (was the state saved by a different pipeline?)");
  }
  return it->second;
}

std::string IteratorState::Serialize() const {
  std::string out(kMagic, sizeof(kMagic));
  PutVarint(out, kVersion);
  PutVarint(out, values_.size());
  for (const auto& [key, value] : values_) {
    PutVarint(out, key.size());
    out += key;
    PutVarint(out, value.size());
    out += value;
  }
  return out;
}

IteratorState IteratorState::Deserialize(std::string_view bytes) {
  auto malformed = [](const std::string& what) {
    return Error("iterator state: malformed serialized state: " + what);
  };
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    throw malformed("missing \"IPST\" magic");
  }
  bytes.remove_prefix(sizeof(kMagic));
  uint64_t version = 0, count = 0;
  if (!GetVarint(&bytes, &version)) throw malformed("truncated version");
  if (version != kVersion) {
    throw malformed("unsupported version " + std::to_string(version) + " (expected " +
                    std::to_string(kVersion) + ")");
  }
  if (!GetVarint(&bytes, &count)) throw malformed("truncated entry count");
  IteratorState state;
  for (uint64_t i = 0; i < count; ++i) {
    std::string_view key, value;
    if (!GetLengthPrefixed(&bytes, &key)) {
      throw malformed("entry " + std::to_string(i) + " of " + std::to_string(count) +
                      ": truncated key");
    }
    if (!GetLengthPrefixed(&bytes, &value)) {
      throw malformed("entry '" + std::string(key) + "': truncated value");
    }
    if (!state.values_.emplace(std::string(key), std::string(value)).second) {
      throw malformed("duplicate key '" + std::string(key) + "'");
    }
  }
  if (!bytes.empty()) {
    throw malformed(std::to_string(bytes.size()) + " bytes after the last entry");
  }
  return state;
}

void StateEncoder::PutInt(int64_t v) { PutVarint(out_, ZigZag(v)); }

void StateEncoder::PutBytes(std::string_view v) {
  PutVarint(out_, v.size());
  out_.append(v);
}

int64_t StateDecoder::GetInt() {
  uint64_t v = 0;
  if (!GetVarint(&data_, &v)) throw Error(what_ + ": truncated or malformed integer");
  return UnZigZag(v);
}

std::string StateDecoder::GetBytes() {
  std::string_view v;
  if (!GetLengthPrefixed(&data_, &v)) throw Error(what_ + ": truncated or malformed bytes field");
  return std::string(v);
}

}  // namespace imgpipe::pipeline
