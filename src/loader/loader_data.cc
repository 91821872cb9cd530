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
  return LoaderDataOf(pipeline::ResolveDataSource(data, options), split, policy);
}

LoaderData LoaderDataOf(pipeline::DataSource source, const std::string& split, ErrorPolicy policy) {
  LoaderData d;
  d.source = std::move(source);
  const std::string& data = d.source.data;
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
  // Each file's records and bytes (a few round trips each over a network: many at once).
  std::vector<int64_t> records(d.paths.size());
  d.sizes.assign(d.paths.size(), 0);
  ForEachStoragePath(d.paths, [&](size_t i) {
    records[i] = CountRecords(d.paths[i], policy);
    d.sizes[i] = StorageSize(d.paths[i]);
  });
  uint64_t bytes = 0;
  for (size_t i = 0; i < d.paths.size(); ++i) {
    d.samples += records[i];
    bytes += d.sizes[i];
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
