#include "convert/record_inputs.h"

#include <algorithm>
#include <map>

#include "record/compression.h"
#include "record/example.h"
#include "record/image_feature_keys.h"
#include "record/index.h"
#include "record/tfrecord_reader.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

// The split names, "a, b": for messages.
std::string SplitList(const RecordInputs& records) {
  std::string names;
  for (const std::string& s : records.split_names) names += (names.empty() ? "" : ", ") + s;
  return names;
}

}  // namespace

bool IsRecordInput(const std::string& input) {
  if (IsDirectory(input)) return !pipeline::FindTfRecordFiles(input).empty();
  if (IsManifestPath(input)) return false;
  if (PathExists(input)) {
    if (!pipeline::HasTfRecordFrame(input)) {
      throw Error(input + ": not an image folder, a manifest (.csv, .jsonl, .json) or a "
                  "TFRecord file");
    }
    return true;
  }
  // A glob pattern of TFRecord files; any other missing path is reported as missing.
  return input.find_first_of("*?[") != std::string::npos;
}

RecordInputs ListRecordInputs(const std::string& input, ThreadPool& pool, InputList* list,
                              std::vector<uint64_t>* sizes) {
  RecordInputs records;
  // The classes of labels.txt: when nothing beside the records names them, every label is
  // read once (cached) rather than guessed from a sample.
  pipeline::DataSourceOptions options;
  options.scan_labels = true;
  records.source = pipeline::ResolveDataSource(input, options);
  const pipeline::DataSource& source = records.source;
  if (source.schema.label_key.empty()) {
    throw Error(input + ": its records have no label feature (such as image/class/label or "
                "label); imgpipe convert writes labelled data sets");
  }
  // 1. Every file's records, from its index or a scan (compressed files cannot be
  //    read at an offset).
  std::vector<std::vector<IndexEntry>> entries(source.files.size());
  ParallelFor(pool, source.files.size(), [&](size_t f) {
    const std::string& path = source.files[f].path;
    if (DetectCompression(path) != Compression::kNone) {
      throw Error(path + ": a compressed TFRecord file; decompress the files first "
                  "(imgpipe convert reads records at their offsets)");
    }
    std::string index = IndexPathFor(path);
    entries[f] = PathExists(index) ? ReadIndexFile(index) : BuildIndex(path);
  });
  // 2. The inputs, split by split (a file whose name says no split: "train"), files in
  //    path order within a split.
  std::map<std::string, std::vector<uint32_t>> files_of_split;
  for (size_t f = 0; f < source.files.size(); ++f) {
    const std::string& split = source.files[f].split;
    files_of_split[split.empty() ? "train" : split].push_back(static_cast<uint32_t>(f));
  }
  // A folder's files (TFRecord files directly in it) are named by their file names, as
  // an image folder's images are by their relative paths; a file's or a pattern's by
  // their paths, which may lie in several folders.
  const bool folder = IsDirectory(input);
  *list = InputList(folder ? input : "");
  list->class_names = source.class_names;
  if (list->class_names.empty()) {
    for (int64_t i = 0; i < source.schema.num_classes; ++i) {
      list->class_names.push_back(std::to_string(i));
    }
  }
  sizes->clear();
  for (const auto& [split, files] : files_of_split) {
    records.split_names.push_back(split);
    records.split_begin.push_back(records.file.size());
    for (uint32_t f : files) {
      const std::string& path = source.files[f].path;
      const std::string name = folder ? BaseName(path) : path;
      for (const IndexEntry& e : entries[f]) {
        records.file.push_back(f);
        records.offset.push_back(e.offset);
        sizes->push_back(e.size);
        list->Add(name + "@" + std::to_string(e.offset), 0);
      }
    }
  }
  records.split_begin.push_back(records.file.size());
  if (records.empty()) throw Error(input + ": its TFRecord files hold no records");
  return records;
}

ConvertPlan MakeRecordConvertPlan(const RecordInputs& records, const std::vector<uint64_t>& sizes,
                                  const PlanOptions& options) {
  if (options.splits.size() != 1 || options.splits[0].name != "train") {
    throw Error("--split: TFRecord input keeps its own splits (" + SplitList(records) +
                "); --split divides image folders and manifests");
  }
  ConvertPlan plan;
  for (size_t k = 0; k < records.split_names.size(); ++k) {
    const size_t begin = records.split_begin[k], end = records.split_begin[k + 1];
    PlanOptions one = options;
    one.splits = {{records.split_names[k], 1.0}};
    ConvertPlan part = MakeConvertPlan(std::span(sizes).subspan(begin, end - begin), one);
    for (PlannedShard& shard : part.shards) {
      for (uint32_t& input : shard.inputs) input += static_cast<uint32_t>(begin);
      plan.shards.push_back(std::move(shard));
    }
  }
  return plan;
}

ImageExample MakeRecordExample(const RecordInputs& records, size_t i, const std::string& name,
                               const std::vector<std::string>& class_names,
                               const ImageExampleOptions& options, int* label) {
  const pipeline::DataSource& source = records.source;
  const std::string& path = source.files[records.file[i]].path;
  const uint64_t offset = records.offset[i];
  // 1. The record, its image and its class (the schema's label offset applied).
  std::string data = ReadTfRecordAt(path, offset);
  Example example = ParseExample(data, path, offset);
  pipeline::ImageView view = pipeline::ViewImage(example.features(), source.schema, path, offset);
  if (view.label < 0) throw DataError(path, offset, "the record has no label");
  *label = static_cast<int>(view.label);
  const std::string where = path + "@" + std::to_string(offset);
  StoredImage image = StoreImage(std::string(view.bytes), where, options);
  // 2. The record re-made: its image under imgpipe's keys, every other feature kept.
  Features* f = example.mutable_features();
  if (source.schema.image_key != image_keys::kEncoded) {
    f->mutable_feature()->erase(source.schema.image_key);
  }
  const std::string class_text =
      static_cast<size_t>(*label) < class_names.size() ? class_names[*label] : "";
  SetImageFeatures(f, image, *label, class_text, options);
  if (!GetBytesFeature(*f, image_keys::kFilename)) {
    std::optional<std::string_view> file_name = GetBytesFeature(*f, "file_name");  // TFDS's
    AddBytesFeature(f, image_keys::kFilename, file_name ? *file_name : std::string_view(name));
  }
  return {SerializeExample(example), image.restart_markers_added, image.restart_failure};
}

}  // namespace imgpipe
