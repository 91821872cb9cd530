// A data argument (--data) resolved into TFRecord shards by split, the layout that
// made them, and the schema to read their records with: the one place bench, train,
// extract, inspect and classify turn --data into input. Throws Error (nothing to read,
// keys not found, with the keys and flags to use), DataError, IoError.
//
// Layouts recognised:
//   imgpipe   imgpipe convert: SPLIT-NNNNN-of-NNNNN.tfrecord, labels.txt, dataset.json;
//             image/encoded, image/class/label 0-based.
//   tf-slim   TF-slim / build_imagenet_data.py: SPLIT-NNNNN-of-NNNNN (no extension);
//             image/encoded, image/class/label 1..K (0 is "background"),
//             image/class/synset, image/class/text.
//   tfds      TensorFlow Datasets: NAME-SPLIT.tfrecord-NNNNN-of-NNNNN, dataset_info.json,
//             label.labels.txt; image, label 0-based, file_name.
//   tfrecord  any other TFRecord files of tf.train.Example records.
//   image-folder  a folder with one sub-folder per class (no TFRecord files).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/record_schema.h"
#include "pipeline/tfrecord_files.h"
#include "record/example.h"

namespace imgpipe::pipeline {

// What the user may set instead of detection (--image-key, --label-key, --label-offset).
struct DataSourceOptions {
  std::string image_key;                // empty: detected from the first record
  std::string label_key;                // empty: detected ("none": no labels)
  std::optional<int64_t> label_offset;  // unset: detected (1 for TF-slim labels, else 0)
};

enum class DataLayout { kImgpipe, kTfSlim, kTfds, kTfRecord, kImageFolder };

// "imgpipe", "tf-slim", "tfds", "tfrecord" or "image-folder".
const char* LayoutName(DataLayout layout);

struct DataSource {
  std::string data;  // the argument as given
  DataLayout layout = DataLayout::kTfRecord;
  std::vector<TfRecordFile> files;  // every TFRecord file, sorted by path; empty for folders
  RecordSchema schema;              // num_classes set when known
  std::vector<FeatureDescription> features;  // of the first record
  std::vector<std::string> class_names;      // line i: class i; empty when unknown
  std::string class_names_from;    // "labels.txt", "label.labels.txt", "dataset_info.json",
                                   // "image/class/text", "image/class/synset" or ""
  std::string label_offset_reason; // why schema.label_offset was chosen
  int64_t scanned_records = 0;     // records read to detect labels and classes
  int64_t min_label = 0, max_label = -1;  // stored labels seen in them (max < min: none)

  // Whether some file's name says `split`.
  bool HasSplit(const std::string& split) const;
  // The paths of split `split`'s files (every file for ""). Throws Error naming the
  // splits found when there are none.
  std::vector<std::string> Paths(const std::string& split = "") const;
  // What was found and chosen, in one paragraph for the user (printed once).
  std::string Describe() const;
};

// Resolves `data`: a folder (TFRecord files found by FindTfRecordFiles, else an image
// folder of class sub-folders, unless a sub-folder holds shards: then an Error names
// it), a TFRecord file or a glob pattern of them. Reads the
// first record for the keys and up to ~2048 records (spread over the files) for the
// label range and the records' class names. Throws Error when there is nothing to read,
// or no image key (message lists the keys found and names --image-key/--label-key).
DataSource ResolveDataSource(const std::string& data, const DataSourceOptions& options = {});

}  // namespace imgpipe::pipeline
