#include "loader_data.h"

#include <string_view>

#include "pipeline/input_list.h"
#include "pipeline/source_datasets.h"
#include "record/crc32c.h"
#include "record/index.h"
#include "record/tfrecord_reader.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::python {
namespace {

// The TFRecord files of folder `dir` (see ResolveLoaderData).
std::vector<std::string> TfRecordFilesIn(const std::string& dir) {
  std::vector<std::string> files;
  for (const std::string& name : ListDirectory(dir)) {
    if (name.find(".tfrecord") != std::string::npos && name.find(".idx") == std::string::npos &&
        name.find(kTemporarySuffix) == std::string::npos) {
      files.push_back(JoinPath(dir, name));
    }
  }
  return files;
}

// Records in `file`: its .idx file's entry count when there is one, else a scan under
// `policy`.
int64_t CountRecords(const std::string& file, ErrorPolicy policy) {
  const std::string index = IndexPathFor(file);
  if (PathExists(index)) return static_cast<int64_t>(ReadIndexFile(index).size());
  TfRecordReaderOptions options;
  options.policy = policy;
  TfRecordReader reader(file, options);
  std::string record;
  int64_t n = 0;
  while (reader.Next(&record)) ++n;
  return n;
}

}  // namespace

LoaderData ResolveLoaderData(const std::vector<std::string>& patterns, ErrorPolicy policy) {
  if (patterns.empty()) throw Error("Loader: `data` names no files");
  LoaderData data;
  if (patterns.size() == 1 && IsDirectory(patterns[0])) {
    data.paths = TfRecordFilesIn(patterns[0]);
    if (data.paths.empty()) {
      data.image_folder = true;
      data.paths = {patterns[0]};
      data.samples = static_cast<int64_t>(ListImageFolder(patterns[0]).images.size());
      return data;
    }
  } else {
    data.paths = pipeline::MatchFiles(patterns);
  }
  for (const std::string& file : data.paths) data.samples += CountRecords(file, policy);
  return data;
}

uint32_t DataFingerprint(const LoaderData& data) {
  std::string text = std::to_string(data.samples);
  for (const std::string& path : data.paths) {
    text += "\n" + path + " " + (data.image_folder ? "folder" : std::to_string(FileSize(path)));
  }
  return crc32c::Value(text.data(), text.size());
}

}  // namespace imgpipe::python
