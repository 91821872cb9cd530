// What the records' labels are: read from the first records of each file (a sample) or
// from every record (a census, which the class count and the label offset may rest on),
// only the label feature of each (record/example_view.h), and a census kept in a cache
// file so that the next run does not read the data again. Throws IoError, HttpError,
// DataError (a cache file that does not parse is read as no cache, not thrown).
//
// The cache file, labels.scan.json (beside the shards, else in the user's cache folder):
//   {"version": 1, "label_key": KEY,
//    "files": [{"name": BASENAME, "size": BYTES, "mtime_ns": NS, "records": N,
//               "labelled": N, "min": L, "max": L, "min_offset": O, "max_offset": O}...],
//    "text": {"LABEL": "image/class/text", ...}, "synset": {"LABEL": "...", ...}}
// A file's entry counts only while its size and modification time (a URL's: its size)
// are the same; a changed or new file is read again and the entry replaced.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "record/tfrecord_reader.h"

namespace imgpipe::pipeline {

// What one file's records say about labels.
struct FileLabels {
  std::string path;
  uint64_t size = 0;       // bytes, when read
  int64_t mtime_ns = 0;    // modification time of a local file (0 for a URL)
  int64_t records = 0;     // good records read
  int64_t labelled = 0;    // of those, with the label feature
  int64_t min = 0, max = -1;  // stored labels (max < min: none)
  uint64_t min_offset = 0, max_offset = 0;  // a record holding min, max
  bool complete = false;   // read to the end of the file
};

// What a set of files says about labels: a sample's, or a census's when every file is
// complete.
struct LabelCensus {
  std::vector<FileLabels> files;          // in the order of the paths read
  std::map<int64_t, std::string> text;    // stored label -> first image/class/text
  std::map<int64_t, std::string> synset;  // stored label -> first image/class/synset
  std::string cache_path;                 // where a census was kept or found ("": nowhere)
  int64_t files_from_cache = 0;           // files whose entry came from cache_path

  int64_t records() const;
  int64_t labelled() const;
  int64_t min() const;  // over every file (max() < min(): no label seen)
  int64_t max() const;
  // Whether every record of every file was read.
  bool complete() const;
  // The file holding the lowest / highest label, and the offset of a record with it;
  // nullptr when no label was seen.
  const FileLabels* FileWithMin() const;
  const FileLabels* FileWithMax() const;
};

// Called as a census goes: bytes of the files read so far, of all of them.
using LabelScanProgress = std::function<void(uint64_t bytes_done, uint64_t bytes_total)>;

// A reader of `path` from its start that passes over corrupt records (counted, logged);
// with `piece_bytes` > 0, a URL is fetched in ranged GETs of that size (after a HEAD), so
// that reading a few records does not fetch 8 MiB pieces of every shard.
std::unique_ptr<TfRecordReader> OpenSkippingReader(const std::string& path, uint64_t piece_bytes);

// The labels of up to `per_file` records at the start of each of `paths` (corrupt records
// and ones that do not parse passed over: the pipeline meets them under its own policy),
// a URL read in ranged pieces; files read many at once, merged in order.
LabelCensus SampleLabels(const std::vector<std::string>& paths, const std::string& label_key, int64_t per_file);

// Where a census of files in folder `dir` is kept: `dir`/labels.scan.json when `dir` is a
// local folder that this process may write, else a file named by a hash of `dir` in
// $XDG_CACHE_HOME/imgpipe/label-scans/ (~/.cache when unset).
std::string LabelCensusCachePath(const std::string& dir);

// The census of `paths` from the cache file `cache_path` when it holds an unchanged entry
// for each of them under `label_key`; else nothing (files, and cache_path, empty).
LabelCensus CachedLabelCensus(const std::vector<std::string>& paths, const std::string& label_key,
                              const std::string& cache_path);

// The census of `paths`: the cached entries that are still valid, and every record's
// label of the other files, read on up to `threads` threads (16 for URLs), `progress`
// called as they go (may be null); the result is written back to `cache_path` (atomically;
// a write that fails is logged and the census is still returned, cache_path then "").
LabelCensus CensusLabels(const std::vector<std::string>& paths, const std::string& label_key,
                         const std::string& cache_path, int threads, const LabelScanProgress& progress);

}  // namespace imgpipe::pipeline
