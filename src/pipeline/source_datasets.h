// Sources: file lists, TFRecord files, image folders.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pipeline/dataset.h"
#include "pipeline/element.h"

namespace imgpipe::pipeline {

// The files (not folders) matching any of `patterns`, sorted and de-duplicated. Brace
// ranges and lists ("train-{00000..00127}-of-00128", "{a,b}": io/storage.h's ExpandBraces)
// are expanded first; then glob(3)'s *, ? and [..] match local files, and for a URL
// (s3://, gs://, http(s)://) the names its folder lists; a URL without them is taken as
// it is (a missing one fails when it is opened). Throws Error naming the patterns when
// none match.
std::vector<std::string> MatchFiles(const std::vector<std::string>& patterns);

// The files matching any of `patterns` (glob(3): *, ?, [..]), sorted and de-duplicated;
// with `shuffle`, reshuffled each epoch from `seed` (default: the pipeline's seed).
// Throws Error when no file matches. State: epoch order is recomputed; position saved.
DatasetPtr<std::string> ListFiles(std::vector<std::string> patterns, bool shuffle = false,
                                  std::optional<uint64_t> seed = std::nullopt);

// The records of each file of `files`, file after file (plain, GZIP or ZLIB). Corrupt
// records follow the pipeline's error policy (skip: counted in the stage's errors).
// State: the file's position in `files` and the record offset within it.
DatasetPtr<Record> TfRecordFiles(DatasetPtr<std::string> files);

// Record-level sharding (ShardPolicy kData): reads the `.idx` files of `files` (built
// by BuildIndex when missing) and yields the records of the contiguous rule
// (pipeline/shard_rule.h: [index*N/num_shards, (index+1)*N/num_shards)) of their
// concatenation, N = all records; so every shard gets the same count +-1 even when
// files are few or uneven. Reads sequentially. Throws Error for a bad shard index.
DatasetPtr<Record> TfRecordRecordShard(std::vector<std::string> files, int num_shards, int index);

enum class ShardPolicy {
  kFile,  // whole files per shard: file i goes to shard i % num_shards
  kData,  // record-level, from the index files (TfRecordRecordShard)
  kAuto,  // kFile when there are at least num_shards files, else kData
};

// The TFRecord files of `patterns` split for shard `index` of `num_shards` by `policy`;
// (see ShardPolicy).
DatasetPtr<Record> ShardedTfRecords(std::vector<std::string> patterns, int num_shards, int index,
                                    ShardPolicy policy);

// Every image file of a folder with one sub-folder per class (the un-converted
// baseline): Record.data is the file's bytes, Record.label its class index (sub-folders
// sorted bytewise). With `shuffle`, the file order is reshuffled each epoch.
DatasetPtr<Record> ImageFiles(std::string folder, bool shuffle = false,
                              std::optional<uint64_t> seed = std::nullopt);

}  // namespace imgpipe::pipeline
