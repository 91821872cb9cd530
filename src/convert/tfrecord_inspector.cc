#include "convert/tfrecord_inspector.h"

#include "io/storage.h"
#include "record/image_feature_keys.h"
#include "record/index.h"
#include "record/tfrecord_format.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

// The key to build a class histogram from: TensorFlow's image label, else the only
// single-value int64 feature whose key mentions "label" or "class".
std::string FindLabelKey(const std::vector<FeatureDescription>& features) {
  std::string found;
  for (const FeatureDescription& f : features) {
    if (f.key == image_keys::kLabel && f.kind == "int64") return f.key;
    if (f.kind == "int64" && f.length == 1 &&
        (f.key.find("label") != std::string::npos || f.key.find("class") != std::string::npos)) {
      if (!found.empty()) return "";  // ambiguous
      found = f.key;
    }
  }
  return found;
}

void CountRecord(const std::string& data, uint64_t offset, FileInspection* out) {
  if (out->record_type == "sequence_example") {
    tf::SequenceExample sequence;
    if (!sequence.ParseFromString(data)) ++out->unparsable_records;
    return;
  }
  Example example;
  if (!example.ParseFromString(data)) {
    ++out->unparsable_records;
    return;
  }
  if (out->label_key.empty()) return;
  std::optional<int64_t> label = GetInt64Feature(example.features(), out->label_key);
  if (!label) return;
  ++out->class_counts[*label];
  if (!out->class_names.count(*label)) {
    if (auto text = GetBytesFeature(example.features(), image_keys::kClassText)) {
      out->class_names[*label] = std::string(*text);
    }
  }
}

void DescribeFirstRecord(const std::string& data, FileInspection* out) {
  // A SequenceExample's bytes also parse as an Example (field 2 is unknown to it), so
  // feature_lists decide.
  tf::SequenceExample sequence;
  if (sequence.ParseFromString(data) && sequence.feature_lists().feature_list_size() > 0) {
    out->record_type = "sequence_example";
    out->features = DescribeFeatures(sequence.context());
    out->feature_lists = DescribeFeatureLists(sequence.feature_lists());
    return;
  }
  Example example;
  if (example.ParseFromString(data)) {
    out->record_type = "example";
    out->features = DescribeFeatures(example.features());
    out->label_key = FindLabelKey(out->features);
  }
}

std::string CheckIndex(const std::string& path, const std::vector<IndexEntry>& seen) {
  std::string index_path = IndexPathFor(path);
  if (!StorageExists(index_path)) return "absent";
  try {
    std::vector<IndexEntry> index = ReadIndexFile(index_path);
    if (index.size() != seen.size()) {
      return "index lists " + std::to_string(index.size()) + " records, file has " +
             std::to_string(seen.size());
    }
    for (size_t i = 0; i < index.size(); ++i) {
      if (index[i] != seen[i]) {
        return "index entry " + std::to_string(i) + " is (" + std::to_string(index[i].offset) +
               ", " + std::to_string(index[i].size) + "), record is at (" +
               std::to_string(seen[i].offset) + ", " + std::to_string(seen[i].size) + ")";
      }
    }
    return "ok";
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace

FileInspection InspectTfRecordFile(const std::string& path, const InspectOptions& options) {
  FileInspection out;
  out.path = path;
  std::vector<IndexEntry> seen;
  try {
    out.file_bytes = StorageSize(path);
    TfRecordReaderOptions reader_options;
    reader_options.policy = options.policy;
    TfRecordReader reader(path, reader_options);
    out.compression = reader.compression();
    std::string data;
    try {
      while (reader.Next(&data)) {
        if (out.records == 0) DescribeFirstRecord(data, &out);
        CountRecord(data, reader.record_offset(), &out);
        seen.push_back({reader.record_offset(), tfrecord::kHeaderSize + data.size() + tfrecord::kFooterSize});
        ++out.records;
        out.data_bytes += data.size();
      }
    } catch (const DataError& e) {
      out.fatal_error = e.what();
      out.errors.push_back({e.offset().value_or(0), e.reason()});
      if (e.reason().find("CRC") != std::string::npos) ++out.crc_errors;
    }
    for (const CorruptRecord& c : reader.stats().errors) out.errors.push_back(c);
    out.crc_errors += reader.stats().crc_errors;
  } catch (const Error& e) {
    out.fatal_error = e.what();
  }
  if (options.check_index && out.compression == Compression::kNone && out.fatal_error.empty() &&
      out.errors.empty()) {
    out.index_status = CheckIndex(path, seen);
  }
  return out;
}

}  // namespace imgpipe
