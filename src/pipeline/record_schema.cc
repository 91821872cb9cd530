#include "pipeline/record_schema.h"

#include "image/image_format.h"
#include "record/example_view.h"
#include "util/error.h"

namespace imgpipe::pipeline {
namespace {

// Image keys in the order they are tried: TensorFlow's ImageNet tools, TFDS, and the
// names other writers use.
constexpr const char* kImageKeys[] = {
    "image/encoded", "image", "image_raw", "image/raw", "image_bytes", "image/bytes",
    "jpeg", "jpg", "png", "encoded", "img", "data"};
// Label keys, likewise.
constexpr const char* kLabelKeys[] = {
    "image/class/label", "label", "labels", "image/label", "class", "class_id",
    "label_id", "category", "category_id", "target", "y"};

// Whether `features` has `key` with a value of `kind` ("bytes" or "int64").
bool HasKind(const Features& features, const std::string& key, const std::string& kind) {
  auto it = features.feature().find(key);
  if (it == features.feature().end()) return false;
  return kind == "bytes" ? it->second.has_bytes_list() && it->second.bytes_list().value_size() > 0
                         : it->second.has_int64_list() && it->second.int64_list().value_size() > 0;
}

// The feature readers for both sources of features: a Features message, an ExampleView.
using imgpipe::GetBytesFeature;
using imgpipe::GetInt64Feature;

std::optional<std::string_view> GetBytesFeature(const ExampleView& view, const std::string& key) {
  return view.FirstBytes(key);
}

std::optional<int64_t> GetInt64Feature(const ExampleView& view, const std::string& key) {
  return view.FirstInt64(key);
}

// ViewImage over `features`, a Features message or an ExampleView: anything with
// GetBytesFeature and GetInt64Feature overloads.
template <typename FeatureSource>
ImageView ViewImageIn(const FeatureSource& features, const RecordSchema& schema,
                      const std::string& path, uint64_t offset) {
  auto bytes = GetBytesFeature(features, schema.image_key);
  if (!bytes) throw DataError(path, offset, "record has no bytes feature " + schema.image_key);
  ImageView view{*bytes, -1};
  if (schema.label_key.empty()) return view;
  auto stored = GetInt64Feature(features, schema.label_key);
  if (!stored) throw DataError(path, offset, "record has no int64 feature " + schema.label_key);
  view.label = *stored - schema.label_offset;
  // A class index below 0 under an offset, or past the known classes, cannot be right;
  // with neither known (offset 0, no class count) the label is as stored.
  const bool below = view.label < 0 && schema.label_offset != 0;
  if (below || (schema.num_classes > 0 && (view.label < 0 || view.label >= schema.num_classes))) {
    throw LabelOutOfRangeError(schema, path, offset, *stored);
  }
  return view;
}

}  // namespace

LabelOutOfRange LabelOutOfRangeError(const RecordSchema& schema, const std::string& path, uint64_t offset,
                                     int64_t stored, const std::string& classes_from) {
  const std::string where = path + ": offset " + std::to_string(offset) + ": label " + std::to_string(stored) +
                            " (" + schema.label_key + ", label offset " + std::to_string(schema.label_offset) + ")";
  if (schema.num_classes <= 0) {
    return LabelOutOfRange(where + " is below the label offset; set --label-offset or check the data");
  }
  const std::string n = std::to_string(schema.num_classes);
  return LabelOutOfRange(where + " is outside the " + n + " classes [0, " + n + ")" +
                         (classes_from.empty() ? "" : " of " + classes_from) +
                         "; set --label-offset or check the data");
}

ImageView ViewImage(const Features& features, const RecordSchema& schema,
                    const std::string& path, uint64_t offset) {
  return ViewImageIn(features, schema, path, offset);
}

ImageView ViewImage(std::string_view data, const RecordSchema& schema, const std::string& path,
                    uint64_t offset, Example* example) {
  if (std::optional<ExampleView> view = ExampleView::Scan(data)) {
    return ViewImageIn(*view, schema, path, offset);
  }
  *example = ParseExample(data, path, offset);
  return ViewImageIn(example->features(), schema, path, offset);
}

std::string DetectImageKey(const Features& features) {
  for (const char* key : kImageKeys) {
    if (HasKind(features, key, "bytes")) return key;
  }
  for (const FeatureDescription& f : DescribeFeatures(features)) {
    auto value = GetBytesFeature(features, f.key);
    if (value && DetectImageFormat(*value) != ImageFormat::kUnknown) return f.key;
  }
  return "";
}

std::string DetectLabelKey(const Features& features) {
  for (const char* key : kLabelKeys) {
    if (HasKind(features, key, "int64")) return key;
  }
  return "";
}

std::string DescribeKeys(const Features& features) {
  std::string out;
  for (const FeatureDescription& f : DescribeFeatures(features)) {
    out += (out.empty() ? "" : ", ") + f.key + " (" + f.kind + ")";
  }
  return out.empty() ? "none" : out;
}

}  // namespace imgpipe::pipeline
