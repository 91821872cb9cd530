// Reads the features of a serialized tf.train.Example in place, without protobuf's
// copies of their bytes (in an image record the encoded image is most of the record).
// It reads only the plain encoding that TensorFlow's and imgpipe's writers produce
// (example.proto; each message field once, map entries as key then value, keys in
// ASCII, no unknown fields); for any other input, valid or not, Scan returns nullopt and
// the caller parses with ParseExample (example.h), so that every result and every error
// stays protobuf's. Throws nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace imgpipe {

class ExampleView {
 public:
  // Scans `data` (which must outlive the view) and checks all of it: every feature's
  // list in the form protobuf parses. Returns nullopt when `data` is not in the plain
  // encoding above (then ParseExample decides whether it is a valid Example).
  static std::optional<ExampleView> Scan(std::string_view data);

  // The first value of the feature `key`, viewed in the scanned data; nullopt when the
  // feature is absent, of another kind or empty (as GetBytesFeature and GetInt64Feature).
  std::optional<std::string_view> FirstBytes(std::string_view key) const;
  std::optional<int64_t> FirstInt64(std::string_view key) const;

 private:
  enum class Kind { kEmpty, kBytes, kFloat, kInt64 };
  struct Feature {
    std::string_view key;
    Kind kind = Kind::kEmpty;
    std::string_view list;  // the BytesList, FloatList or Int64List message
  };

  const Feature* Find(std::string_view key) const;

  std::vector<Feature> features_;  // in the order of the data; keys distinct
};

}  // namespace imgpipe
