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

namespace imgpipe::pipeline {
namespace {

// Records read in all to find the label range and the records' class names.
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

// Reader options that pass over corrupt records (counted, logged) instead of throwing.
TfRecordReaderOptions SkippingReader() {
  TfRecordReaderOptions options;
  options.policy = ErrorPolicy::kSkip;
  return options;
}

// A reader of the first records of `path` that pass over corrupt ones: a URL's fetched in
// ranged GETs of `piece_bytes` (after a HEAD), so that reading a few records does not
// fetch 8 MiB pieces of every shard; a local file's as usual.
std::unique_ptr<TfRecordReader> OpenFirstRecords(const std::string& path, uint64_t piece_bytes) {
  if (!IsUrl(path)) return std::make_unique<TfRecordReader>(path, SkippingReader());
  std::unique_ptr<ByteSource> source = OpenByteSource(path);
  std::vector<ByteRange> pieces = SplitIntoPieces({0, source->size()}, piece_bytes);
  return std::make_unique<TfRecordReader>(ReadRangesAhead(std::move(source), std::move(pieces)), SkippingReader());
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
    const std::unique_ptr<TfRecordReader> reader = OpenFirstRecords(file.path, uint64_t{1} << 20);
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

// The layout that made `files` (see data_source.h), from the folder's side files, the
// file names and the first record's keys.
DataLayout DetectLayout(const std::string& dir, const std::vector<TfRecordFile>& files,
                        const Features& features) {
  static const std::regex tfds_name(R"(.+-[A-Za-z0-9_]+\.tfrecord-\d{5}-of-\d{5}(\.gz)?)");
  static const std::regex slim_name(R"([A-Za-z0-9_]+-\d{5}-of-\d{5}(\.gz)?)");
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
  if (features.feature().count("image/class/synset") || std::regex_match(name, slim_name)) {
    return DataLayout::kTfSlim;
  }
  return DataLayout::kTfRecord;
}

// What the records say about labels: the stored range and each label's text.
struct LabelScan {
  int64_t records = 0;
  int64_t min = 0, max = -1;
  bool has_text = false;                  // image/class/text or image/class/synset present
  std::map<int64_t, std::string> text;    // stored label -> image/class/text
  std::map<int64_t, std::string> synset;  // stored label -> image/class/synset
};

// What the first `limit` records of `path` say about labels, corrupt ones passed over. A
// URL is read in pieces of about `limit` records (128 KiB each; 1 to 8 MiB).
LabelScan ScanFileLabels(const std::string& path, const std::string& label_key, int64_t limit) {
  const uint64_t piece_bytes = std::clamp<uint64_t>(static_cast<uint64_t>(limit) << 17, 1 << 20, 8 << 20);
  const std::unique_ptr<TfRecordReader> reader = OpenFirstRecords(path, piece_bytes);
  LabelScan scan;
  std::string data;
  for (; scan.records < limit && reader->Next(&data); ++scan.records) {
    Example example;
    if (!example.ParseFromString(data)) continue;  // a bad record, met again in the pipeline
    auto label = GetInt64Feature(example.features(), label_key);
    if (!label) continue;
    scan.min = scan.max < scan.min ? *label : std::min(scan.min, *label);
    scan.max = std::max(scan.max, *label);
    if (auto text = GetBytesFeature(example.features(), image_keys::kClassText)) scan.text.emplace(*label, *text);
    if (auto synset = GetBytesFeature(example.features(), "image/class/synset")) scan.synset.emplace(*label, *synset);
  }
  return scan;
}

// `next` (a later file's scan) added to `scan`, as if read after it.
void MergeLabelScan(const LabelScan& next, LabelScan* scan) {
  scan->records += next.records;
  if (next.max >= next.min) {
    scan->min = scan->max < scan->min ? next.min : std::min(scan->min, next.min);
    scan->max = std::max(scan->max, next.max);
  }
  scan->text.insert(next.text.begin(), next.text.end());  // a label's first text stays
  scan->synset.insert(next.synset.begin(), next.synset.end());
}

// Reads up to kScanRecords records, the first ones of each file in turn, passing over
// corrupt ones. Files are scanned 64 at a time (many at once over a network) and merged
// in order.
LabelScan ScanLabels(const std::vector<TfRecordFile>& files, const std::string& label_key) {
  constexpr size_t kChunk = 64;
  LabelScan scan;
  const int64_t per_file = std::max<int64_t>(1, kScanRecords / static_cast<int64_t>(files.size()));
  for (size_t begin = 0; begin < files.size() && scan.records < kScanRecords; begin += kChunk) {
    std::vector<std::string> paths;
    for (size_t i = begin; i < std::min(files.size(), begin + kChunk); ++i) paths.push_back(files[i].path);
    std::vector<LabelScan> scans(paths.size());
    ForEachStoragePath(paths, [&](size_t i) { scans[i] = ScanFileLabels(paths[i], label_key, per_file); });
    for (const LabelScan& next : scans) {
      if (scan.records >= kScanRecords) break;
      MergeLabelScan(next, &scan);
    }
  }
  scan.has_text = !scan.text.empty() || !scan.synset.empty();
  return scan;
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

// Class names from the files beside the shards: labels.txt (imgpipe), LABEL.labels.txt
// (TFDS), or dataset_info.json's class count (names then become the indices).
void ClassNamesFromFolder(const std::string& dir, const std::string& label_key, DataSource* s) {
  for (const std::string& name : {std::string("labels.txt"), label_key + ".labels.txt"}) {
    if (!label_key.empty() && StorageExists(JoinPath(dir, name))) {
      s->class_names = NonEmptyLines(JoinPath(dir, name));
      s->class_names_from = name;
      return;
    }
  }
  const std::string info_path = JoinPath(dir, "dataset_info.json");
  if (label_key.empty() || !StorageExists(info_path)) return;
  nlohmann::json info = nlohmann::json::parse(ReadStorageFile(info_path), nullptr, /*allow_exceptions=*/false);
  const nlohmann::json* label = FindClassLabel(info);
  if (!label || !label->contains("numClasses")) return;
  const nlohmann::json& n = (*label)["numClasses"];  // TFDS writes int64 as a string
  const int64_t count = n.is_string() ? std::stoll(n.get<std::string>()) : n.get<int64_t>();
  for (int64_t i = 0; i < count; ++i) s->class_names.push_back(std::to_string(i));
  s->class_names_from = "dataset_info.json";
}

// The label offset: the option's, else 1 for TF-slim's labels (no 0 seen, with
// image/class/text or synset, not imgpipe's layout; with a class-names file of K names,
// label K seen), else 0.
void ChooseLabelOffset(const DataSourceOptions& options, const LabelScan& scan, DataSource* s) {
  if (options.label_offset) {
    s->schema.label_offset = *options.label_offset;
    s->label_offset_reason = "--label-offset " + std::to_string(*options.label_offset);
    return;
  }
  const int64_t known = static_cast<int64_t>(s->class_names.size());
  if (s->layout != DataLayout::kImgpipe && scan.has_text && scan.max >= scan.min &&
      scan.min >= 1 && (known == 0 || scan.max == known)) {
    s->schema.label_offset = 1;
    s->label_offset_reason =
        "TF-slim's 1-based labels (1..K with image/class/text or synset, no 0: 0 is "
        "background), shifted by -1; --label-offset 0 keeps them";
    return;
  }
  s->label_offset_reason = "0-based labels";
}

// Class names from the records' image/class/text (else synset) when the folder had
// none; then the class count.
void ClassNamesFromRecords(const LabelScan& scan, DataSource* s) {
  const int64_t offset = s->schema.label_offset;
  if (s->class_names.empty() && scan.has_text) {
    const auto& names = scan.text.empty() ? scan.synset : scan.text;
    s->class_names_from = scan.text.empty() ? "image/class/synset" : image_keys::kClassText;
    for (int64_t i = 0; i <= scan.max - offset; ++i) {
      auto it = names.find(i + offset);
      s->class_names.push_back(it != names.end() ? it->second : std::to_string(i));
    }
  }
  const int64_t seen = scan.max >= scan.min ? scan.max - offset + 1 : 0;
  s->schema.num_classes = s->class_names.empty() ? seen : static_cast<int64_t>(s->class_names.size());
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
  // 3. Labels: their range, offset and class names.
  const LabelScan scan = ScanLabels(s.files, s.schema.label_key);
  s.scanned_records = scan.records;
  s.min_label = scan.min;
  s.max_label = scan.max;
  ClassNamesFromFolder(dir, s.schema.label_key, &s);
  ChooseLabelOffset(options, scan, &s);
  ClassNamesFromRecords(scan, &s);
  return s;
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
  out << "\n  labels: stored " << min_label << ".." << max_label << " in the " << scanned_records
      << " record(s) read; offset " << schema.label_offset << ": " << label_offset_reason;
  out << "\n  classes: " << schema.num_classes << ", names from "
      << (class_names_from.empty() ? "nowhere (indices)" : class_names_from);
  return out.str();
}

}  // namespace imgpipe::pipeline
