// The saved position of an iterator: a flat, ordered map of named values that each
// stage writes under its own prefix (e.g. "3.shuffle/rng"), serialisable to bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace imgpipe::pipeline {

class IteratorState {
 public:
  void PutInt(const std::string& key, int64_t value);
  void PutBytes(const std::string& key, std::string value);
  bool Has(const std::string& key) const { return values_.count(key) > 0; }
  // Throw Error naming the key when it is missing or malformed.
  int64_t GetInt(const std::string& key) const;
  const std::string& GetBytes(const std::string& key) const;

  // Self-describing binary form ("IPST" magic, version, count, then length-prefixed
  // key/value pairs); Deserialize throws Error on anything malformed.
  std::string Serialize() const;
  static IteratorState Deserialize(std::string_view bytes);

  size_t size() const { return values_.size(); }
  bool operator==(const IteratorState&) const = default;

 private:
  std::map<std::string, std::string> values_;
};

// Appends length-prefixed fields to a string and reads them back; for stages that
// pack several values (a buffer of elements) into one state entry.
class StateEncoder {
 public:
  void PutInt(int64_t v);
  void PutBytes(std::string_view v);
  std::string Finish() { return std::move(out_); }

 private:
  std::string out_;
};

class StateDecoder {
 public:
  // `what` names the data in errors.
  StateDecoder(std::string_view data, std::string what) : data_(data), what_(std::move(what)) {}
  int64_t GetInt();
  std::string GetBytes();
  bool done() const { return data_.empty(); }

 private:
  std::string_view data_;
  std::string what_;
};

}  // namespace imgpipe::pipeline
