// tf.train.Example / SequenceExample codec (messages in example.proto) and helpers to
// build and read features by key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "record/example.pb.h"

namespace imgpipe {

using tf::Example;
using tf::Features;
using tf::SequenceExample;

// Builders: append one value to the feature `key`, creating it with that kind.
void AddBytesFeature(Features* features, const std::string& key, std::string_view value);
void AddInt64Feature(Features* features, const std::string& key, int64_t value);
void AddFloatFeature(Features* features, const std::string& key, float value);

// Serialises deterministically (map entries sorted by key), so equal Examples give
// equal bytes on every run.
std::string SerializeExample(const Example& example);

// Parses; throws DataError(path, offset, ...) when `data` is not a valid Example.
// `path` and `offset` only label the error.
Example ParseExample(std::string_view data, const std::string& path, uint64_t offset);
SequenceExample ParseSequenceExample(std::string_view data, const std::string& path,
                                     uint64_t offset);

// Readers: the first value of `key`, or nullopt when absent or of another kind.
std::optional<std::string_view> GetBytesFeature(const Features& features, const std::string& key);
std::optional<int64_t> GetInt64Feature(const Features& features, const std::string& key);

// One feature's shape, for schema descriptions.
struct FeatureDescription {
  std::string key;
  std::string kind;  // "bytes", "float", "int64" or "empty"
  size_t length = 0; // values in the feature (for feature lists: total over steps)
  size_t steps = 0;  // feature lists only: number of steps; 0 otherwise
  bool operator==(const FeatureDescription&) const = default;
};

// Keys sorted bytewise.
std::vector<FeatureDescription> DescribeFeatures(const Features& features);
std::vector<FeatureDescription> DescribeFeatureLists(const tf::FeatureLists& lists);

}  // namespace imgpipe
