// Test data for labels that a sample cannot judge (issue 44): TFRecord files without any
// labels.txt, dataset.json or dataset_info.json, whose first records hold neither the
// lowest nor the highest label, as many users' own shards are.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "image/codec.h"
#include "record/example.h"
#include "record/tfrecord_writer.h"
#include "util/file.h"

namespace imgpipe::pipeline {

// The shape of WriteLabelLessShards' files.
struct LabelLessShards {
  int files = 40;
  int records_per_file = 60;  // the resolver samples 2048 / 40 = 51 of each
  int classes = 10;           // labels 0..classes-1, each with image/class/text "class-L"
  int max_file = 7, max_record = 57;  // where the only record of the highest label is
  int min_file = 3, min_record = 58;  // where the only record of label 0 is

  // The stored label of record `r` of file `f`: 1..classes-2 except the two above.
  int64_t Label(int f, int r) const {
    if (f == max_file && r == max_record) return classes - 1;
    if (f == min_file && r == min_record) return 0;
    return 1 + (f * records_per_file + r) % (classes - 2);
  }
  // The name of file `f`: imgpipe convert's, which says no TF-slim convention.
  std::string Name(int f) const {
    char name[64];
    std::snprintf(name, sizeof(name), "train-%05d-of-%05d.tfrecord", f, files);
    return name;
  }
};

// What WriteLabelLessShards wrote: the paths, and the offsets of the records of the
// highest label and of label 0.
struct LabelLessFiles {
  std::vector<std::string> paths;
  uint64_t max_offset = 0, min_offset = 0;
};

// Writes `shape`'s files into `dir` (made): record r of file f is an 8 x 8 JPEG with
// image/class/label shape.Label(f, r) and image/class/text "class-LABEL".
inline LabelLessFiles WriteLabelLessShards(const std::string& dir, const LabelLessShards& shape = {}) {
  MakeDirectories(dir);
  const std::string jpeg = EncodeJpeg(Image{8, 8, 3, std::vector<uint8_t>(8 * 8 * 3, 128)}, 75);
  LabelLessFiles out;
  for (int f = 0; f < shape.files; ++f) {
    out.paths.push_back(JoinPath(dir, shape.Name(f)));
    std::unique_ptr<WritableFile> file = OpenWritableFile(out.paths.back());
    TfRecordWriter writer(*file);
    for (int r = 0; r < shape.records_per_file; ++r) {
      Example e;
      AddBytesFeature(e.mutable_features(), "image/encoded", jpeg);
      AddInt64Feature(e.mutable_features(), "image/class/label", shape.Label(f, r));
      AddBytesFeature(e.mutable_features(), "image/class/text", "class-" + std::to_string(shape.Label(f, r)));
      const uint64_t offset = writer.Write(SerializeExample(e)).offset;
      if (f == shape.max_file && r == shape.max_record) out.max_offset = offset;
      if (f == shape.min_file && r == shape.min_record) out.min_offset = offset;
    }
    writer.Close();
    file->Close();
  }
  return out;
}

}  // namespace imgpipe::pipeline
