#include "loader_data.h"

#include "pipeline/input_list.h"
#include "record/crc32c.h"
#include "record/index.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::python {
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
    d.samples = static_cast<int64_t>(ListImageFolder(data).images.size());
    return d;
  }
  d.paths = split.empty() || !HasSplits(d.source) ? d.source.Paths() : d.source.Paths(split);
  for (const std::string& file : d.paths) d.samples += CountRecords(file, policy);
  return d;
}

uint32_t DataFingerprint(const LoaderData& data) {
  std::string text = std::to_string(data.samples);
  for (const std::string& path : data.paths) {
    text += "\n" + path + " " + (data.image_folder ? "folder" : std::to_string(FileSize(path)));
  }
  return crc32c::Value(text.data(), text.size());
}

}  // namespace imgpipe::python
