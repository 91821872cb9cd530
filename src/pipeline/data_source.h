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

#include "pipeline/label_census.h"
#include "pipeline/record_schema.h"
#include "pipeline/tfrecord_files.h"
#include "record/example.h"

namespace imgpipe::pipeline {

// What the user may set instead of detection (--image-key, --label-key, --label-offset),
// and whether to read every record's label when nothing else says the class count.
struct DataSourceOptions {
  std::string image_key;                // empty: detected from the first record
  std::string label_key;                // empty: detected ("none": no labels)
  std::optional<int64_t> label_offset;  // unset: 1 for TF-slim's labels when certain, else 0
  // Read every record's label (once: the result is cached, label_census.h) when no file
  // beside the data gives the class count and the sample did not read every record.
  bool scan_labels = false;
  int scan_threads = 0;              // files read at once by that scan (0: the CPUs)
  LabelScanProgress scan_progress;   // told of its bytes as it goes (may be null)
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
  // The labels read: the first records of each file (a sample), or every record (a
  // census: labels.complete()), from which the class count may come.
  LabelCensus labels;
  int64_t scanned_records = 0;     // records read (labels.records())
  int64_t min_label = 0, max_label = -1;  // stored labels seen in them (max < min: none)
  // Where schema.num_classes came from: a class-names file ("labels.txt", ...), "records"
  // (every record's label read), "--num-classes" (the caller's), or "" (unknown: 0).
  std::string classes_from;

  // Whether some file's name says `split`.
  bool HasSplit(const std::string& split) const;
  // The paths of split `split`'s files (every file for ""). Throws Error naming the
  // splits found when there are none.
  std::vector<std::string> Paths(const std::string& split = "") const;
  // What was found and chosen, in one paragraph for the user (printed once).
  std::string Describe() const;
  // Sets the class count to `n` (the caller's, e.g. --num-classes): checked against the
  // labels when every record's label was read, else against the sample's. Throws
  // LabelOutOfRange naming the label, its file and record offset and the label offset
  // when a label falls outside [0, n).
  void SetClassCount(int64_t n, const std::string& from);

 private:
  std::string DescribeLabelsRead() const;  // the labels line of Describe
  std::string DescribeClasses() const;     // the classes line
};

// Resolves `data`: a folder (TFRecord files found by FindTfRecordFiles, else an image
// folder of class sub-folders, unless a sub-folder holds shards: then an Error names
// it), a TFRecord file or a glob pattern of them. Reads the first record for the keys and
// up to ~2048 records (the first of each file) for the label range. The class count comes
// from a class-names file beside the data (labels.txt, LABEL.labels.txt, dataset.json,
// dataset_info.json), else from every record's label: when the sample read them all, when
// a cached census of unchanged files exists, or (options.scan_labels) read now; else it
// is unknown (0) and labels are not checked. The offset is 1 only on certain evidence
// (see ChooseLabelOffset). Throws Error when there is nothing to read, or no image key
// (message lists the keys found and names --image-key/--label-key).
DataSource ResolveDataSource(const std::string& data, const DataSourceOptions& options = {});

}  // namespace imgpipe::pipeline
