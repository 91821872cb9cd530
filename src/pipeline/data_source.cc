#include "pipeline/data_source.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "io/storage.h"
#include "pipeline/source_datasets.h"
#include "record/tfrecord_reader.h"
#include "util/error.h"
#include "util/file.h"
#include "util/logging.h"
#include "util/thread_pool.h"

namespace imgpipe::pipeline {
namespace {

// Records read in all, the first ones of each file, to sample the labels.
constexpr int64_t kScanRecords = 2048;

// The TFRecord files of `data`: a folder's (FindTfRecordFiles), one file, or a glob's
// (or brace pattern's).
std::vector<TfRecordFile> ListSourceFiles(const std::string& data, bool folder) {
  if (folder) return FindTfRecordFiles(data);
  const bool single = IsUrl(data) ? data.find_first_of("*?[{") == std::string::npos : PathExists(data);
  std::vector<TfRecordFile> files;
  for (const std::string& path : single ? std::vector<std::string>{data} : MatchFiles({data})) {
    files.push_back({path, SplitOfName(BaseName(path))});
  }
  return files;
}

// The sub-folders of `dir` (an image folder's classes), hidden ones left out.
std::vector<std::string> SubFolders(const std::string& dir) {
  std::vector<std::string> folders;
  for (const std::string& name : ListDirectory(dir)) {
    if (name[0] != '.' && IsDirectory(JoinPath(dir, name))) folders.push_back(JoinPath(dir, name));
  }
  return folders;
}

// Throws Error when a sub-folder of `dir` holds files with TFRecord names (TFDS keeps
// its shards in NAME/VERSION/), naming it: --data should point there.
void CheckNoNestedShards(const std::string& dir, const std::vector<std::string>& sub_folders) {
  for (const std::string& folder : sub_folders) {
    for (const std::string& name : ListDirectory(folder)) {
      if (HasTfRecordName(name)) {
        throw Error(dir + ": no TFRecord files here, but " + folder + " has some (" + name +
                    "); pass --data " + folder);
      }
    }
  }
}

// The first record of the first file that has one, parsed; its path and offset.
struct FirstRecord {
  Example example;
  std::string path;
  uint64_t offset = 0;
};
// Corrupt records are passed over here (the pipeline meets them under its own policy);
// when no file has a good record, throws Error naming the first corrupt one (or saying
// that the files are empty).
FirstRecord ReadFirstRecord(const std::vector<TfRecordFile>& files) {
  std::string first_corrupt;
  for (const TfRecordFile& file : files) {
    const std::unique_ptr<TfRecordReader> reader = OpenSkippingReader(file.path, uint64_t{1} << 20);
    std::string data;
    if (reader->Next(&data)) {
      return {ParseExample(data, file.path, reader->record_offset()), file.path, reader->record_offset()};
    }
    if (first_corrupt.empty() && !reader->stats().errors.empty()) {
      const CorruptRecord& bad = reader->stats().errors.front();
      first_corrupt = file.path + ": offset " + std::to_string(bad.offset) + ": " + bad.reason + "; ";
    }
  }
  throw Error(first_corrupt + "no good record in any of the " + std::to_string(files.size()) +
              " TFRecord file(s) of " + (files.size() == 1 ? files[0].path : DirName(files[0].path)));
}

// The image and label keys: the options' when set (checked against the first record),
// else detected. Throws Error listing the record's keys and the flags to use.
void ChooseKeys(const DataSourceOptions& options, const FirstRecord& first, RecordSchema* schema) {
  const Features& features = first.example.features();
  auto fail = [&](const std::string& what) {
    throw Error(first.path + ": offset " + std::to_string(first.offset) + ": " + what +
                "; the record's keys: " + DescribeKeys(features) +
                ". Name the image feature with --image-key KEY and the label with "
                "--label-key KEY (or --label-key none)");
  };
  schema->image_key = options.image_key.empty() ? DetectImageKey(features) : options.image_key;
  if (schema->image_key.empty()) fail("no feature holds an encoded image");
  if (!GetBytesFeature(features, schema->image_key)) {
    fail("no bytes feature '" + schema->image_key + "' (--image-key)");
  }
  if (options.label_key == "none") {
    schema->label_key.clear();
    return;
  }
  schema->label_key = options.label_key.empty() ? DetectLabelKey(features) : options.label_key;
  if (!options.label_key.empty() && !GetInt64Feature(features, schema->label_key)) {
    fail("no int64 feature '" + schema->label_key + "' (--label-key)");
  }
}

// Whether `name` is build_imagenet_data.py's: SPLIT-NNNNN-of-NNNNN, no extension.
bool HasTfSlimName(const std::string& name) {
  static const std::regex slim_name(R"([A-Za-z0-9_]+-\d{5}-of-\d{5}(\.gz)?)");
  return std::regex_match(name, slim_name);
}

// The layout that made `files` (see data_source.h), from the folder's side files, the
// file names and the first record's keys.
DataLayout DetectLayout(const std::string& dir, const std::vector<TfRecordFile>& files,
                        const Features& features) {
  static const std::regex tfds_name(R"(.+-[A-Za-z0-9_]+\.tfrecord-\d{5}-of-\d{5}(\.gz)?)");
  static const std::regex imgpipe_name(R"([A-Za-z0-9_]+-\d{5}-of-\d{5}\.tfrecord)");
  const std::string name = BaseName(files.front().path);
  if (std::regex_match(name, tfds_name) || StorageExists(JoinPath(dir, "dataset_info.json"))) {
    return DataLayout::kTfds;
  }
  // imgpipe's before TF-slim's: TF-slim shards re-converted by imgpipe keep their
  // image/class/synset feature.
  if (std::regex_match(name, imgpipe_name) &&
      (StorageExists(JoinPath(dir, "dataset.json")) || StorageExists(JoinPath(dir, "labels.txt")))) {
    return DataLayout::kImgpipe;
  }
  if (features.feature().count("image/class/synset") || HasTfSlimName(name)) {
    return DataLayout::kTfSlim;
  }
  return DataLayout::kTfRecord;
}

}  // namespace

namespace {

// The non-empty lines of `path`.
std::vector<std::string> NonEmptyLines(const std::string& path) {
  std::vector<std::string> lines;
  std::istringstream in(ReadStorageFile(path));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

// The first "classLabel" object in TFDS's dataset_info.json `info` (features ->
// featuresDict -> features -> LABEL -> classLabel), or null.
const nlohmann::json* FindClassLabel(const nlohmann::json& info) {
  if (!info.is_object() && !info.is_array()) return nullptr;
  if (info.is_object() && info.contains("classLabel")) return &info["classLabel"];
  for (const auto& item : info) {
    if (const nlohmann::json* found = FindClassLabel(item)) return found;
  }
  return nullptr;
}

// The class names of imgpipe's dataset.json at `path` ("classes"); empty when it has none.
std::vector<std::string> ClassNamesOfDatasetJson(const std::string& path) {
  nlohmann::json summary = nlohmann::json::parse(ReadStorageFile(path), nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> names;
  if (!summary.is_object() || !summary.contains("classes") || !summary["classes"].is_array()) return names;
  for (const nlohmann::json& name : summary["classes"]) {
    if (name.is_string()) names.push_back(name.get<std::string>());
  }
  return names;
}

// Class names from the files beside the shards: labels.txt (imgpipe), LABEL.labels.txt
// (TFDS), imgpipe's dataset.json, or dataset_info.json's class count (names then become
// the indices).
void ClassNamesFromFolder(const std::string& dir, const std::string& label_key, DataSource* s) {
  if (label_key.empty()) return;
  for (const std::string& name : {std::string("labels.txt"), label_key + ".labels.txt"}) {
    if (StorageExists(JoinPath(dir, name))) {
      s->class_names = NonEmptyLines(JoinPath(dir, name));
      s->class_names_from = name;
      return;
    }
  }
  if (s->layout == DataLayout::kImgpipe && StorageExists(JoinPath(dir, "dataset.json"))) {
    s->class_names = ClassNamesOfDatasetJson(JoinPath(dir, "dataset.json"));
    if (!s->class_names.empty()) s->class_names_from = "dataset.json";
    return;
  }
  const std::string info_path = JoinPath(dir, "dataset_info.json");
  if (!StorageExists(info_path)) return;
  nlohmann::json info = nlohmann::json::parse(ReadStorageFile(info_path), nullptr, /*allow_exceptions=*/false);
  const nlohmann::json* label = FindClassLabel(info);
  if (!label || !label->contains("numClasses")) return;
  const nlohmann::json& n = (*label)["numClasses"];  // TFDS writes int64 as a string
  const int64_t count = n.is_string() ? std::stoll(n.get<std::string>()) : n.get<int64_t>();
  for (int64_t i = 0; i < count; ++i) s->class_names.push_back(std::to_string(i));
  s->class_names_from = "dataset_info.json";
}

// The labels of `s`: a sample of the first records of each file (up to kScanRecords in
// all); when no class names were found beside the data and the sample is not every
// record, a cached census of unchanged files, else (options.scan_labels) every record's.
void ReadLabels(const DataSourceOptions& options, const std::string& dir, DataSource* s) {
  const std::vector<std::string> paths = s->Paths();
  const size_t sampled = std::min<size_t>(paths.size(), kScanRecords);
  const int64_t per_file = std::max<int64_t>(1, kScanRecords / static_cast<int64_t>(paths.size()));
  s->labels = SampleLabels({paths.begin(), paths.begin() + sampled}, s->schema.label_key, per_file);
  for (size_t i = sampled; i < paths.size(); ++i) s->labels.files.push_back({.path = paths[i]});  // not read
  if (!s->class_names.empty() || s->labels.complete()) return;
  const std::string cache_path = LabelCensusCachePath(dir);
  LabelCensus cached = CachedLabelCensus(paths, s->schema.label_key, cache_path);
  if (cached.complete()) {
    s->labels = std::move(cached);
  } else if (options.scan_labels) {
    LogInfo(dir + ": no labels.txt, dataset.json or dataset_info.json, so every record's label is read once "
            "(kept in " + cache_path + ")");
    const int threads = options.scan_threads > 0 ? options.scan_threads : AvailableCpus();
    s->labels = CensusLabels(paths, s->schema.label_key, cache_path, threads, options.scan_progress);
  }
}

// The label offset: the option's, else 1 for TF-slim's 1-based labels where the evidence
// is certain: a class-names file of K names and a label K read, or build_imagenet_data.py's
// file names (SPLIT-NNNNN-of-NNNNN) with its image/class/text or synset and no label 0 read
// (never imgpipe's layout); else 0. The minimum of a sample alone never decides it.
void ChooseLabelOffset(const DataSourceOptions& options, DataSource* s) {
  if (options.label_offset) {
    s->schema.label_offset = *options.label_offset;
    s->label_offset_reason = "--label-offset " + std::to_string(*options.label_offset);
    return;
  }
  const LabelCensus& seen = s->labels;
  const int64_t known = static_cast<int64_t>(s->class_names.size());
  const bool any = seen.max() >= seen.min(), has_text = !seen.text.empty() || !seen.synset.empty();
  const bool label_k = known > 0 && any && seen.max() == known;
  const bool slim_names = known == 0 && has_text && HasTfSlimName(BaseName(s->files.front().path));
  if (s->layout != DataLayout::kImgpipe && any && seen.min() >= 1 && (label_k || slim_names)) {
    s->schema.label_offset = 1;
    s->label_offset_reason = std::string("TF-slim's 1-based labels (") +
                             (label_k ? "label " + std::to_string(known) + " with " + std::to_string(known) +
                                            " names in " + s->class_names_from
                                      : "build_imagenet_data.py's file names and class texts, no label 0") +
                             "), shifted by -1; --label-offset 0 keeps them";
    return;
  }
  s->label_offset_reason = "0-based labels";
  if (any && seen.min() >= 1 && has_text) {
    s->label_offset_reason += " (no label 0 read; --label-offset 1 if they are TF-slim's 1-based ones)";
  }
}

// The class count: the class names' (found beside the data), else the labels' when every
// record's was read (names from their image/class/text, else synset), else unknown (0).
void ChooseClasses(DataSource* s) {
  if (!s->class_names.empty()) {
    s->schema.num_classes = static_cast<int64_t>(s->class_names.size());
    s->classes_from = s->class_names_from;
    return;
  }
  if (!s->labels.complete()) return;  // unknown
  const LabelCensus& all = s->labels;
  const int64_t offset = s->schema.label_offset;
  s->schema.num_classes = all.max() >= all.min() ? std::max<int64_t>(0, all.max() - offset + 1) : 0;
  s->classes_from = "records";
  if (all.text.empty() && all.synset.empty()) return;
  const auto& names = all.text.empty() ? all.synset : all.text;
  s->class_names_from = all.text.empty() ? "image/class/synset" : image_keys::kClassText;
  for (int64_t i = 0; i < s->schema.num_classes; ++i) {
    auto it = names.find(i + offset);
    s->class_names.push_back(it != names.end() ? it->second : std::to_string(i));
  }
}

}  // namespace

const char* LayoutName(DataLayout layout) {
  switch (layout) {
    case DataLayout::kImgpipe: return "imgpipe";
    case DataLayout::kTfSlim: return "tf-slim";
    case DataLayout::kTfds: return "tfds";
    case DataLayout::kTfRecord: return "tfrecord";
    case DataLayout::kImageFolder: return "image-folder";
  }
  return "?";
}

DataSource ResolveDataSource(const std::string& data, const DataSourceOptions& options) {
  DataSource s;
  s.data = data;
  // 1. The files; a local folder without any is an image folder.
  const bool folder = IsStorageFolder(data);
  s.files = ListSourceFiles(data, folder);
  if (s.files.empty()) {
    const std::vector<std::string> sub_folders = folder && !IsUrl(data) ? SubFolders(data)
                                                                        : std::vector<std::string>{};
    if (!sub_folders.empty()) {
      CheckNoNestedShards(data, sub_folders);
      s.layout = DataLayout::kImageFolder;
      return s;
    }
    throw Error(data + ": no TFRecord files (by name: *.tfrecord, *.tfrecord-NNNNN-of-NNNNN, "
                "SPLIT-NNNNN-of-NNNNN, .gz; or by content) and no class sub-folders");
  }
  // 2. Keys and layout from the first record.
  const FirstRecord first = ReadFirstRecord(s.files);
  ChooseKeys(options, first, &s.schema);
  s.features = DescribeFeatures(first.example.features());
  const std::string dir = folder ? data : DirName(s.files.front().path);
  s.layout = DetectLayout(dir, s.files, first.example.features());
  if (s.schema.label_key.empty()) return s;
  // 3. Labels: their range, offset and class count.
  ClassNamesFromFolder(dir, s.schema.label_key, &s);
  ReadLabels(options, dir, &s);
  s.scanned_records = s.labels.records();
  s.min_label = s.labels.min();
  s.max_label = s.labels.max();
  ChooseLabelOffset(options, &s);
  ChooseClasses(&s);
  return s;
}

void DataSource::SetClassCount(int64_t n, const std::string& from) {
  RecordSchema checked = schema;
  checked.num_classes = n;
  // The labels read that fall outside [0, n): the lowest and highest are the ones to check.
  for (const FileLabels* f : {labels.FileWithMax(), labels.FileWithMin()}) {
    if (!f) continue;
    const int64_t stored = f == labels.FileWithMax() ? f->max : f->min;
    const uint64_t offset = f == labels.FileWithMax() ? f->max_offset : f->min_offset;
    if (stored - schema.label_offset < 0 || stored - schema.label_offset >= n) {
      throw LabelOutOfRangeError(checked, f->path, offset, stored, from);
    }
  }
  schema.num_classes = n;
  classes_from = from;
}

std::string DataSource::DescribeLabelsRead() const {
  std::ostringstream out;
  out << "stored " << min_label << ".." << max_label << " in ";
  if (!labels.complete()) {
    out << "the " << scanned_records << " record(s) read (the first of each file, not all)";
  } else if (!labels.cache_path.empty()) {
    out << "all " << scanned_records << " record(s) (every label read once, kept in " << labels.cache_path
        << (labels.files_from_cache == static_cast<int64_t>(labels.files.size()) ? ", read from there" : "") << ")";
  } else {
    out << "all " << scanned_records << " record(s)";
  }
  return out.str();
}

std::string DataSource::DescribeClasses() const {
  std::ostringstream out;
  const std::string names = ", names from " + (class_names_from.empty() ? "nowhere (indices)" : class_names_from);
  if (classes_from.empty()) {
    out << "unknown: no labels.txt, dataset.json or dataset_info.json beside the data, and the labels "
           "read are not all of them, so labels are used as stored and not checked (imgpipe train reads "
           "every record's label once and keeps the count; a labels.txt of K lines beside the shards "
           "names K classes)";
  } else if (classes_from == "records") {
    out << schema.num_classes << " from every record's label" << names;
  } else if (classes_from == "--num-classes") {
    out << schema.num_classes << " from --num-classes";
  } else {
    out << schema.num_classes << " from " << classes_from << names;
  }
  return out.str();
}

bool DataSource::HasSplit(const std::string& split) const {
  return std::any_of(files.begin(), files.end(), [&](const TfRecordFile& f) { return f.split == split; });
}

std::vector<std::string> DataSource::Paths(const std::string& split) const {
  std::vector<std::string> paths;
  for (const TfRecordFile& f : files) {
    if (split.empty() || f.split == split) paths.push_back(f.path);
  }
  if (paths.empty()) {
    std::string found;
    for (const TfRecordFile& f : files) {
      const std::string name = f.split.empty() ? "(none)" : f.split;
      if (found.find(name) == std::string::npos) found += (found.empty() ? "" : ", ") + name;
    }
    throw Error(data + ": no TFRecord files of split '" + split + "' (splits found: " +
                (found.empty() ? "none" : found) + ")");
  }
  return paths;
}

std::string DataSource::Describe() const {
  std::ostringstream out;
  static const std::map<DataLayout, const char*> made_by = {
      {DataLayout::kImgpipe, "imgpipe convert"},
      {DataLayout::kTfSlim, "TF-slim / build_imagenet_data.py"},
      {DataLayout::kTfds, "TensorFlow Datasets"},
      {DataLayout::kTfRecord, "tf.train.Example records of another writer"},
      {DataLayout::kImageFolder, "one sub-folder per class"}};
  out << "data " << data << ": layout " << LayoutName(layout) << " (" << made_by.at(layout) << ")";
  if (layout == DataLayout::kImageFolder) return out.str();
  std::map<std::string, int> per_split;
  for (const TfRecordFile& f : files) per_split[f.split.empty() ? "unsplit" : f.split]++;
  out << ", " << files.size() << " TFRecord file(s):";
  for (const auto& [split, n] : per_split) out << " " << split << " " << n;
  out << "\n  keys: image " << schema.image_key << ", label "
      << (schema.label_key.empty() ? "none" : schema.label_key)
      << " (--image-key, --label-key to change)";
  if (schema.label_key.empty()) return out.str();
  out << "\n  labels: " << DescribeLabelsRead() << "; offset " << schema.label_offset << ": "
      << label_offset_reason;
  out << "\n  classes: " << DescribeClasses();
  return out.str();
}

}  // namespace imgpipe::pipeline
