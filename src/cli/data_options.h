// The options every subcommand that reads --data shares (--image-key, --label-key,
// --label-offset), declared once, the one report of how --data was resolved and the eval
// preset's --draft-decode.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "image/presets.h"
#include "loader/loader_options.h"
#include "pipeline/data_source.h"

namespace imgpipe::cli {

// Adds --image-key, --label-key and --label-offset to `cmd`, bound to `options`, as the
// Loader options of those names declare them (cli/loader_flags.h).
void AddDataSourceOptions(CLI::App* cmd, pipeline::DataSourceOptions& options);

// Adds --cache-dir and --cache-size to `cmd`: once its arguments are parsed, the
// process keeps the shards it reads from URLs in that folder (io/storage.h,
// ConfigureStorageCache). Every command that reads --data declares them here.
void AddStorageCacheOptions(CLI::App* cmd);

// Adds --draft-decode (the Loader option draft_decode) to `cmd`, bound to
// `draft_decode`: every command that runs the eval preset without a Loader declares it here.
void AddDraftDecodeFlag(CLI::App* cmd, bool& draft_decode);

// The doc string of --data: what it accepts (see docs/data.md, "What --data accepts").
inline constexpr char kDataDoc[] =
    "A folder of TFRecord shards (imgpipe convert's, TF-slim's train-00000-of-01024, "
    "TFDS's NAME-train.tfrecord-00000-of-00001; found by name or content), a TFRecord "
    "file or glob, or an image folder (class sub-folders)";

// A progress bar on stderr (when a terminal) for a census of labels (label_census.h).
pipeline::LabelScanProgress LabelScanProgressBar();

// ResolveDataSource(data, options), with what it found and chose printed once to stderr.
pipeline::DataSource ResolveAndReport(const std::string& data,
                                      const pipeline::DataSourceOptions& options);

}  // namespace imgpipe::cli
