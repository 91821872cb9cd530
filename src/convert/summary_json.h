// The JSON summaries of `imgpipe convert --json` and `imgpipe inspect --json`, built
// once here for the CLI and the Python package (imgpipe.convert / imgpipe.inspect).
// Each returns one line of JSON text (no newline); nothing here throws for bad data.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "convert/converter.h"
#include "convert/tfrecord_inspector.h"
#include "pipeline/data_source.h"

namespace imgpipe {

// A conversion's counts, shards, seconds and input MB/s.
std::string ConvertSummaryJson(const ConvertSummary& summary);

// One inspected file: counts, corrupt stretches, features, index check and, when a
// label feature was found, the class histogram.
std::string InspectionJson(const FileInspection& inspection);

// A data folder's layout, files, keys, label offset and classes ("classes": null when
// unknown; "classes_from" says whence; "labels_read": the labels read and whether all were).
std::string DataSourceJson(const pipeline::DataSource& source);

// What `imgpipe inspect ARG` reads: ARG itself, or, for a data folder (a directory not
// named like a shard), the folder resolved with `options` (`source`) and its shards
// (none for an image folder). ResolveDataSource's Error propagates.
struct InspectTarget {
  std::optional<pipeline::DataSource> source;
  std::vector<std::string> files;
};
InspectTarget ResolveInspectTarget(const std::string& arg, const pipeline::DataSourceOptions& options);

}  // namespace imgpipe
