// Which features of a tf.train.Example hold the image and the label, how stored labels
// map to class indices, and finding those keys in a record. Reading a record by its
// schema throws DataError (no image) or Error (label outside the classes).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "record/example.h"
#include "record/image_feature_keys.h"
#include "util/error.h"

namespace imgpipe::pipeline {

struct RecordSchema {
  std::string image_key = image_keys::kEncoded;  // bytes: the encoded image
  std::string label_key = image_keys::kLabel;    // int64; empty: no labels (-1)
  int64_t label_offset = 0;  // class index = stored label - label_offset
  int64_t num_classes = 0;   // > 0: a class index outside [0, num_classes) throws;
                             // 0: unknown (labels as stored, below 0 only under an offset)
  bool operator==(const RecordSchema&) const = default;
};

// A stored label outside the data set's classes: an Error, not a DataError, so that it
// is never skipped as a bad element (a wrong label means a wrong data set or offset).
class LabelOutOfRange : public Error {
 public:
  using Error::Error;
};

// The error for stored label `stored` of the record at `path`, `offset`: outside the
// schema's num_classes classes ("of `classes_from`" when given, e.g. "--num-classes"),
// or, when the class count is unknown, below its label offset.
LabelOutOfRange LabelOutOfRangeError(const RecordSchema& schema, const std::string& path, uint64_t offset,
                                     int64_t stored, const std::string& classes_from = "");

// The encoded image and class index of a record, viewed in `features`.
struct ImageView {
  std::string_view bytes;
  int64_t label = -1;  // -1: the record has no label
};

// The image and label of `features` under `schema`. Throws DataError(path, offset)
// naming the key when the image feature is missing or not bytes, or the label (when
// label_key is set: labelled data), and LabelOutOfRange naming path, offset and label
// when the class index is outside [0, num_classes) (num_classes > 0), or below 0 under a
// label offset.
ImageView ViewImage(const Features& features, const RecordSchema& schema,
                    const std::string& path, uint64_t offset);

// The same from a serialized Example, `data`, which must outlive the view: read in place
// (record/example_view.h: no copy of the image's bytes) when `data` is in the plain
// encoding, else parsed into *example (which must then outlive the view). Throws as
// ParseExample and ViewImage do.
ImageView ViewImage(std::string_view data, const RecordSchema& schema, const std::string& path,
                    uint64_t offset, Example* example);

// The image feature of `features`: the first of image/encoded, image, image_raw, jpeg,
// encoded, ... that is a bytes feature, else the first bytes feature (by key) whose
// value is an image by content; "" when none is.
std::string DetectImageKey(const Features& features);

// The label feature: the first of image/class/label, label, class, ... that is an
// int64 feature; "" when none is.
std::string DetectLabelKey(const Features& features);

// "key (kind), key (kind), ..." of every feature, sorted: for error messages.
std::string DescribeKeys(const Features& features);

}  // namespace imgpipe::pipeline
