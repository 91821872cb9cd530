// What a Loader reads: its `data` argument resolved by pipeline::ResolveDataSource (as
// `imgpipe bench/train --data`: layouts imgpipe, tf-slim, tfds, tfrecord, image-folder),
// the files of one split, and the number of samples in them (for len(loader)).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/data_source.h"
#include "util/error_policy.h"

namespace imgpipe::loader {

struct LoaderData {
  pipeline::DataSource source;  // layout, schema (keys, label offset), class names
  // One image folder (class sub-folders), or the TFRecord files of the split, sorted.
  std::vector<std::string> paths;
  std::vector<uint64_t> sizes;  // bytes of paths[i] when resolved; empty for a folder
  bool image_folder = false;
  int64_t samples = 0;  // image files, or records in all the files
  // Mean bytes of a record (an image file, sampled in a folder), for memory estimates.
  uint64_t mean_record_bytes = 0;
};

// Resolves `data` with ResolveDataSource(data, options) and keeps the files of `split`:
// every file when `split` is "" or when no file's name names a split (train, validation,
// test), as `imgpipe train` does; else Error naming the splits found when none is
// `split`. Records are counted from .idx files when present, else by reading the files
// under `policy`: kSkip counts the good records, kFail throws DataError at a bad one.
// Throws Error (nothing to read, keys not found: the message lists the keys found).
LoaderData ResolveLoaderData(const std::string& data, const pipeline::DataSourceOptions& options,
                             const std::string& split, ErrorPolicy policy);

// The same for `source`, resolved already.
LoaderData LoaderDataOf(pipeline::DataSource source, const std::string& split, ErrorPolicy policy);

// A fingerprint of the data: CRC32C over every path with its size (as resolved: no
// request or stat again, so a state is saved without touching the storage) and the
// sample count.
uint32_t DataFingerprint(const LoaderData& data);

}  // namespace imgpipe::loader
