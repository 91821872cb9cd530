// Finding TFRecord files in a folder: by TensorFlow's file names or by content, with
// the split (train, validation, test) each name says. The one shard-name rule of
// imgpipe (data_source.h, doctor's storage probe). Throws IoError for unreadable folders.
#pragma once

#include <string>
#include <vector>

namespace imgpipe::pipeline {

// A TFRecord file found in a folder.
struct TfRecordFile {
  std::string path;
  std::string split;  // "train", "validation", "test", or "" when the name says none
  bool operator==(const TfRecordFile&) const = default;
};

// Whether `name` (a file name, no folder) is one TensorFlow's tools give TFRecord
// files: NAME.tfrecord, NAME.tfrecord-NNNNN-of-NNNNN, SPLIT-NNNNN-of-NNNNN (no
// extension), each optionally followed by .gz; "tfrecords" counts as "tfrecord".
// Hidden names, index files (.idx) and temporary files (.tmp) never match.
bool HasTfRecordName(const std::string& name);

// The split that `name` says: one of its words (split at '-', '_' and '.', after the
// shard suffix) is train, validation (or val, valid, dev), or test; "" when none is.
std::string SplitOfName(const std::string& name);

// Whether `path` starts with a valid TFRecord frame: its first record (after GZIP or
// ZLIB decompression when compressed) reads with both CRCs right. False for empty,
// unreadable or other files; never throws.
bool HasTfRecordFrame(const std::string& path);

// The TFRecord files directly in folder `dir` (a local folder or a URL's: io/storage.h;
// no recursion), sorted bytewise by name:
// the files with a TFRecord name, and the other regular files whose content starts
// with a valid frame (hidden, .idx, .tmp, .txt and .json files are not read).
std::vector<TfRecordFile> FindTfRecordFiles(const std::string& dir);

}  // namespace imgpipe::pipeline
