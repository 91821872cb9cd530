// Map functions that turn records into preprocessed image samples, and the standard
// ImageNet train and eval pipelines in one call each.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "image/presets.h"
#include "pipeline/pipeline.h"
#include "pipeline/record_schema.h"
#include "pipeline/shard_rule.h"

namespace imgpipe::pipeline {

// The encoded image and label of a record: a whole image file (ImageFiles) as it is, or
// a tf.train.Example read by `schema` (default: image/encoded and image/class/label,
// imgpipe convert's and TensorFlow's keys). Throws as ViewImage (record_schema.h).
struct EncodedImage {
  std::string bytes;
  int64_t label = -1;
};
EncodedImage ExtractEncodedImage(Record&& record, const RecordSchema& schema = {});

// A record's sample with the train preset (random choices from the element's seed),
// written in place (map_and_batch) or as a Sample of its own (map); records read by
// `schema`.
SampleWriter TrainSampleWriter(const TrainPreset& preset, const RecordSchema& schema = {});
MapFunction<Record, Sample> TrainSampleFunction(const TrainPreset& preset,
                                                const RecordSchema& schema = {});
// The same with the eval preset.
SampleWriter EvalSampleWriter(const EvalPreset& preset, const RecordSchema& schema = {});
MapFunction<Record, Sample> EvalSampleFunction(const EvalPreset& preset,
                                               const RecordSchema& schema = {});

struct ImagePipelineConfig {
  // TFRecord files (glob patterns), or one folder of class sub-folders (ImageFiles).
  std::vector<std::string> patterns;
  size_t batch_size = 256;
  bool drop_remainder = true;
  size_t shuffle_buffer = 1024;   // records (encoded bytes, not pixels); 0: no shuffle
  // TrainPipeline's shuffling: the file order per epoch and the shuffle buffer (off:
  // the records in order, as EvalPipeline reads them).
  bool shuffle = true;
  int cycle_length = 4;           // TFRecord files read at once
  int reader_threads = kAutotune; // threads reading them (kAutotune: min(cycle, CPUs))
  int map_parallelism = kAutotune;
  int prefetch = kAutotune;       // batches
  int num_shards = 1;             // data parallel: this process reads shard `shard_index`
  int shard_index = 0;
  ShardPolicy shard_policy = ShardPolicy::kAuto;
  bool repeat = false;  // endless: the records repeat, pass after pass (benchmarks)
  RecordSchema schema;  // the records' image and label keys (DataSource::schema)
  // Equal batch counts over ranks (imgpipe.Loader's last_batch): after the shuffle the
  // records are padded to `pad_to` with repeats of this shard's first `batch_size`
  // (0: no padding), and batch `split_batch` comes out as two (-1: none).
  int64_t pad_to = 0;
  int64_t split_batch = -1;
  // Under the skip policy, a record that fails to decode keeps its place in its batch,
  // filled with a copy of the last good sample and marked in Batch::stand_ins
  // (map_and_batch_dataset.h), so an epoch keeps its batch count. Off: it is dropped.
  bool stand_ins = true;
};

// The record-level rule by which the pipelines below give shard config.shard_index its
// records, for `n` records in all: strided over an image folder's files (ShardDataset),
// contiguous over TFRecords under ShardPolicy kData (TfRecordRecordShard); none when
// whole TFRecord files are sharded (kFile, or kAuto, which decides by the file count).
std::optional<ShardRule> RecordShardRule(const ImagePipelineConfig& config);

// list_files -> (shard) -> interleave(tfrecord) -> shuffle -> (pad) -> map(train preset)
// -> batch -> (split_batch) -> prefetch. A folder in `patterns` reads image files instead of TFRecords.
Pipeline<Batch> TrainPipeline(const ImagePipelineConfig& config, const TrainPreset& preset);
// The same with the eval preset's fixed preprocessing instead of random augmentation.
Pipeline<Batch> TrainPipeline(const ImagePipelineConfig& config, const EvalPreset& preset);
// The same without shuffle, with the eval preset, keeping the last partial batch.
Pipeline<Batch> EvalPipeline(const ImagePipelineConfig& config, const EvalPreset& preset);

}  // namespace imgpipe::pipeline
