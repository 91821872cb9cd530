#include "loader/loader_data.h"

#include <algorithm>

#include "io/storage.h"
#include "pipeline/input_list.h"
#include "record/crc32c.h"
#include "record/index.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::loader {
namespace {

// Whether some file of `source` names split train, validation or test.
bool HasSplits(const pipeline::DataSource& source) {
  return source.HasSplit("train") || source.HasSplit("validation") || source.HasSplit("test");
}

}  // namespace

LoaderData ResolveLoaderData(const std::string& data, const pipeline::DataSourceOptions& options,
                             const std::string& split, ErrorPolicy policy) {
  if (data.empty()) throw Error("Loader: `data` is empty");
  LoaderData d;
  d.source = pipeline::ResolveDataSource(data, options);
  if (d.source.layout == pipeline::DataLayout::kImageFolder) {
    d.image_folder = true;
    d.paths = {data};
    const InputList listing = ListImageFolder(data);
    d.samples = static_cast<int64_t>(listing.size());
    // Up to 64 images spread over the listing: stat-ing millions would take minutes.
    const size_t n = listing.size(), step = std::max<size_t>(1, n / 64);
    uint64_t sampled = 0, bytes = 0;
    for (size_t i = 0; i < n; i += step, ++sampled) bytes += FileSize(listing.path(i));
    d.mean_record_bytes = sampled ? bytes / sampled : 0;
    return d;
  }
  d.paths = split.empty() || !HasSplits(d.source) ? d.source.Paths() : d.source.Paths(split);
  uint64_t bytes = 0;
  for (const std::string& file : d.paths) {
    d.samples += CountRecords(file, policy);
    d.sizes.push_back(StorageSize(file));
    bytes += d.sizes.back();
  }
  d.mean_record_bytes = d.samples > 0 ? bytes / static_cast<uint64_t>(d.samples) : 0;
  return d;
}

uint32_t DataFingerprint(const LoaderData& data) {
  std::string text = std::to_string(data.samples);
  for (size_t i = 0; i < data.paths.size(); ++i) {
    text += "\n" + data.paths[i] + " " + (data.image_folder ? "folder" : std::to_string(data.sizes.at(i)));
  }
  return crc32c::Value(text.data(), text.size());
}

}  // namespace imgpipe::loader
