#include "record/example.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>

#include "util/error.h"

namespace imgpipe {
namespace {

// The feature `key`, created empty when absent.
tf::Feature& FeatureAt(Features* features, const std::string& key) {
  return (*features->mutable_feature())[key];
}

// Throws Error when `feature` already holds values of another kind.
void CheckKind(const tf::Feature& feature, tf::Feature::KindCase kind, const std::string& key) {
  if (feature.kind_case() != tf::Feature::KIND_NOT_SET && feature.kind_case() != kind) {
    throw Error("feature '" + key + "' already holds values of another kind");
  }
}

const char* KindName(const tf::Feature& feature) {
  switch (feature.kind_case()) {
    case tf::Feature::kBytesList: return "bytes";
    case tf::Feature::kFloatList: return "float";
    case tf::Feature::kInt64List: return "int64";
    case tf::Feature::KIND_NOT_SET: return "empty";
  }
  return "empty";
}

size_t ValueCount(const tf::Feature& feature) {
  switch (feature.kind_case()) {
    case tf::Feature::kBytesList: return static_cast<size_t>(feature.bytes_list().value_size());
    case tf::Feature::kFloatList: return static_cast<size_t>(feature.float_list().value_size());
    case tf::Feature::kInt64List: return static_cast<size_t>(feature.int64_list().value_size());
    case tf::Feature::KIND_NOT_SET: return 0;
  }
  return 0;
}

// Parses `data` into *message; throws DataError naming `what` on failure.
template <typename Message>
Message ParseMessage(std::string_view data, const std::string& path, uint64_t offset,
                     const char* what) {
  Message message;
  if (data.size() > static_cast<size_t>(INT32_MAX) ||
      !message.ParseFromArray(data.data(), static_cast<int>(data.size()))) {
    throw DataError(path, offset,
                    "record of " + std::to_string(data.size()) + " bytes is not a valid " + what);
  }
  return message;
}

template <typename Map>
std::vector<std::string> SortedKeys(const Map& map) {
  std::vector<std::string> keys;
  keys.reserve(map.size());
  for (const auto& [key, value] : map) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace

void AddBytesFeature(Features* features, const std::string& key, std::string_view value) {
  tf::Feature& feature = FeatureAt(features, key);
  CheckKind(feature, tf::Feature::kBytesList, key);
  feature.mutable_bytes_list()->add_value(std::string(value));
}

void AddInt64Feature(Features* features, const std::string& key, int64_t value) {
  tf::Feature& feature = FeatureAt(features, key);
  CheckKind(feature, tf::Feature::kInt64List, key);
  feature.mutable_int64_list()->add_value(value);
}

void AddFloatFeature(Features* features, const std::string& key, float value) {
  tf::Feature& feature = FeatureAt(features, key);
  CheckKind(feature, tf::Feature::kFloatList, key);
  feature.mutable_float_list()->add_value(value);
}

std::string SerializeExample(const Example& example) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    if (!example.SerializeToCodedStream(&coded)) throw Error("cannot serialise an Example");
  }  // `coded` trims `out` to the bytes written
  return out;
}

Example ParseExample(std::string_view data, const std::string& path, uint64_t offset) {
  return ParseMessage<Example>(data, path, offset, "tf.train.Example");
}

SequenceExample ParseSequenceExample(std::string_view data, const std::string& path,
                                     uint64_t offset) {
  return ParseMessage<SequenceExample>(data, path, offset, "tf.train.SequenceExample");
}

std::optional<std::string_view> GetBytesFeature(const Features& features, const std::string& key) {
  auto it = features.feature().find(key);
  if (it == features.feature().end() || !it->second.has_bytes_list() ||
      it->second.bytes_list().value_size() == 0) {
    return std::nullopt;
  }
  return std::string_view(it->second.bytes_list().value(0));
}

std::optional<int64_t> GetInt64Feature(const Features& features, const std::string& key) {
  auto it = features.feature().find(key);
  if (it == features.feature().end() || !it->second.has_int64_list() ||
      it->second.int64_list().value_size() == 0) {
    return std::nullopt;
  }
  return it->second.int64_list().value(0);
}

std::vector<FeatureDescription> DescribeFeatures(const Features& features) {
  std::vector<FeatureDescription> out;
  for (const std::string& key : SortedKeys(features.feature())) {
    const tf::Feature& feature = features.feature().at(key);
    out.push_back({key, KindName(feature), ValueCount(feature), 0});
  }
  return out;
}

std::vector<FeatureDescription> DescribeFeatureLists(const tf::FeatureLists& lists) {
  std::vector<FeatureDescription> out;
  for (const std::string& key : SortedKeys(lists.feature_list())) {
    const tf::FeatureList& list = lists.feature_list().at(key);
    FeatureDescription description{key, "empty", 0, static_cast<size_t>(list.feature_size())};
    // The kind is the first step's that has one; the length sums over every step.
    for (const tf::Feature& step : list.feature()) {
      if (description.kind == "empty") description.kind = KindName(step);
      description.length += ValueCount(step);
    }
    out.push_back(std::move(description));
  }
  return out;
}

}  // namespace imgpipe
