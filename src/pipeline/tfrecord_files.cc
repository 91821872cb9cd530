#include "pipeline/tfrecord_files.h"

#include <regex>

#include "io/storage.h"
#include "record/tfrecord_reader.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::pipeline {
namespace {

// Whether `s` ends with `suffix`.
bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Names that are never read as shards: hidden, index, temporary and text files.
bool IsNeverShard(const std::string& name) {
  return name.empty() || name[0] == '.' || EndsWith(name, ".idx") ||
         EndsWith(name, kTemporarySuffix) || EndsWith(name, ".txt") || EndsWith(name, ".json");
}

// `name` without its shard suffix "-NNNNN-of-NNNNN" and ".gz".
std::string StemOf(const std::string& name) {
  static const std::regex suffix(R"((-\d+-of-\d+)?(\.gz)?$)");
  return std::regex_replace(name, suffix, "");
}

}  // namespace

bool HasTfRecordName(const std::string& name) {
  if (IsNeverShard(name)) return false;
  static const std::regex tensorflow_names(
      R"(.*\.tfrecords?(-\d+-of-\d+)?(\.gz)?|[A-Za-z0-9_.-]+-\d{5}-of-\d{5}(\.gz)?)");
  return std::regex_match(name, tensorflow_names);
}

std::string SplitOfName(const std::string& name) {
  static const std::regex words(R"([^-_.]+)");
  const std::string stem = StemOf(name);
  std::string split;  // the last word that names one ("mnist_test-train.tfrecord": train)
  for (std::sregex_iterator it(stem.begin(), stem.end(), words), end; it != end; ++it) {
    const std::string word = it->str();
    if (word == "train" || word == "test") split = word;
    if (word == "validation" || word == "val" || word == "valid" || word == "dev") {
      split = "validation";
    }
  }
  return split;
}

bool HasTfRecordFrame(const std::string& path) {
  try {
    TfRecordReader reader(path);
    std::string record;
    return reader.Next(&record);
  } catch (const Error&) {
    return false;
  }
}

std::vector<TfRecordFile> FindTfRecordFiles(const std::string& dir) {
  std::vector<TfRecordFile> files;
  for (const std::string& name : ListStorageFolder(dir)) {  // sorted
    const std::string path = JoinPath(dir, name);
    if (IsNeverShard(name) || (!IsUrl(path) && IsDirectory(path))) continue;
    if (HasTfRecordName(name) || HasTfRecordFrame(path)) files.push_back({path, SplitOfName(name)});
  }
  return files;
}

}  // namespace imgpipe::pipeline
