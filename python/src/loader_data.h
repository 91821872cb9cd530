// What a Loader reads: its `data` argument resolved to files, and the number of
// samples in them (for len(loader)). Throws Error when there is nothing to read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/error_policy.h"

namespace imgpipe::python {

struct LoaderData {
  // One image folder (class sub-folders), or the TFRecord files, sorted.
  std::vector<std::string> paths;
  bool image_folder = false;
  int64_t samples = 0;  // image files, or records in all the files
};

// Resolves `patterns` as `imgpipe bench --data` does: one folder holding TFRecord files
// (names containing ".tfrecord", not index or temporary files) gives those files; a
// folder without any is an image folder; anything else is files or glob patterns.
// (The data-sources work replaces this rule with pipeline::ResolveDataSource.)
// Records are counted from .idx files when present, else by reading the files under
// `policy`: kSkip counts the good records, kFail throws DataError at a bad one.
LoaderData ResolveLoaderData(const std::vector<std::string>& patterns, ErrorPolicy policy);

// A fingerprint of the data: CRC32C over every path with its size and the sample count.
uint32_t DataFingerprint(const LoaderData& data);

}  // namespace imgpipe::python
