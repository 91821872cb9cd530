// `imgpipe inspect`: counts, checks and describes one TFRecord file.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "record/example.h"
#include "record/tfrecord_reader.h"

namespace imgpipe {

struct InspectOptions {
  ErrorPolicy policy = ErrorPolicy::kFail;  // kFail stops at the first corrupt record
  bool check_index = true;                  // compare with <file>.idx when present
};

struct FileInspection {
  std::string path;
  Compression compression = Compression::kNone;
  uint64_t records = 0;
  uint64_t data_bytes = 0;
  uint64_t file_bytes = 0;
  uint64_t crc_errors = 0;
  std::vector<CorruptRecord> errors;  // corrupt stretches (kSkip), or the fatal one
  std::string fatal_error;            // set when reading stopped early (kFail or I/O)
  // Schema of the first record: "example", "sequence_example" or "unknown".
  std::string record_type = "unknown";
  std::vector<FeatureDescription> features;       // Example features / SequenceExample context
  std::vector<FeatureDescription> feature_lists;  // SequenceExample only
  // Class histogram: label -> count, from image/class/label (or a single int64
  // feature whose key names a label or class), with class text where present.
  std::string label_key;
  std::map<int64_t, uint64_t> class_counts;
  std::map<int64_t, std::string> class_names;
  uint64_t unparsable_records = 0;  // records that are not the first record's type
  // Index file check: "absent", "ok", or what differs.
  std::string index_status = "absent";

  bool ok() const { return fatal_error.empty() && errors.empty() && unparsable_records == 0 &&
                           (index_status == "absent" || index_status == "ok"); }
};

// Reads the whole file. Never throws for bad data: problems land in the result.
FileInspection InspectTfRecordFile(const std::string& path, const InspectOptions& options = {});

}  // namespace imgpipe
