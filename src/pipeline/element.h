// What flows between pipeline stages, and how each kind is saved into iterator state.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/buffer_pool.h"
#include "pipeline/iterator_state.h"

namespace imgpipe::pipeline {

// Where a Record's bytes can be read again, so that buffered records are saved into
// iterator state as a reference instead of their bytes.
enum class RecordOrigin {
  kValue,     // nowhere: saved by value
  kTfRecord,  // an uncompressed TFRecord file: ReadTfRecordAt(source, offset)
  kFile,      // the whole file `source`
};

// One record of a source: a TFRecord record (an encoded Example) or a whole image file.
struct Record {
  std::string data;
  std::string source;   // the file it came from
  uint64_t offset = 0;  // byte offset of the record in `source` (0 for a whole file)
  int64_t label = -1;   // image_files(): the class index; -1 when the source has none
  RecordOrigin origin = RecordOrigin::kValue;
  // CRC32C of `data` when the source has checked it (a TFRecord record's data CRC), so
  // that saving the record by reference does not compute it again; set it only
  // together with `data`, and clear it when changing `data`.
  std::optional<uint32_t> data_crc = std::nullopt;
};

// One preprocessed image: `bytes()` bytes of pixels in a pooled buffer, and its label.
struct Sample {
  PooledBuffer pixels;
  int64_t label = -1;
  std::string source;  // provenance, for error messages
  uint64_t offset = 0;
};

// `size` samples laid out back to back in one pooled buffer, with their labels.
struct Batch {
  PooledBuffer data;
  size_t size = 0;          // samples in this batch
  size_t sample_bytes = 0;  // bytes per sample
  std::vector<int64_t> labels;
  // Empty, or `size` marks: 1 for a stand-in, a copy (pixels and label) of another
  // sample put in the place of an element that failed under the skip policy
  // (map_and_batch_dataset.h), so that batch counts do not change.
  std::vector<uint8_t> stand_ins;
};

// ElementCodec<T>: how a stage that buffers elements (shuffle, prefetch, cache, map)
// writes them into iterator state and reads them back. Records are saved by
// reference (origin, source, offset, CRC32C of the data) when `origin` allows, else by
// value; Decode re-reads a reference and throws DataError when the bytes changed.
template <typename T>
struct ElementCodec;

template <>
struct ElementCodec<std::string> {
  static void Encode(const std::string& v, StateEncoder& e) { e.PutBytes(v); }
  static std::string Decode(StateDecoder& d) { return d.GetBytes(); }
};

template <>
struct ElementCodec<Record> {
  static void Encode(const Record& r, StateEncoder& e);
  // Always by value (the data's bytes), keeping `origin`: for a stage whose point is
  // not to re-read the source (cache). Decode reads both forms.
  static void EncodeValue(const Record& r, StateEncoder& e);
  static Record Decode(StateDecoder& d);
  // `count` records as `count` Decode calls read them, but the references re-read
  // together (ReadTfRecordsAt: a file opened once, a URL's neighbours in one ranged read).
  static std::vector<Record> DecodeMany(StateDecoder& d, size_t count);
};

template <>
struct ElementCodec<Sample> {
  static void Encode(const Sample& s, StateEncoder& e);
  static Sample Decode(StateDecoder& d);
};

template <>
struct ElementCodec<Batch> {
  static void Encode(const Batch& b, StateEncoder& e);
  static Batch Decode(StateDecoder& d);
};

// `count` elements read from `d` as `count` ElementCodec<T>::Decode calls read them, through
// the codec's DecodeMany where it has one (records: references re-read together).
template <typename T>
std::vector<T> DecodeElements(StateDecoder& d, size_t count) {
  if constexpr (requires { ElementCodec<T>::DecodeMany(d, count); }) {
    return ElementCodec<T>::DecodeMany(d, count);
  } else {
    std::vector<T> elements;
    elements.reserve(count);
    for (size_t i = 0; i < count; ++i) elements.push_back(ElementCodec<T>::Decode(d));
    return elements;
  }
}

// Bytes an element accounts for in statistics and memory budgets.
inline size_t ElementBytes(const std::string& v) { return v.size(); }
inline size_t ElementBytes(const Record& r) { return r.data.size(); }
inline size_t ElementBytes(const Sample& s) { return s.pixels.size(); }
inline size_t ElementBytes(const Batch& b) { return b.data.size(); }

}  // namespace imgpipe::pipeline
