#include "pipeline/image_samples.h"

#include <algorithm>

#include "io/storage.h"
#include "record/example.h"
#include "record/image_feature_keys.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::pipeline {
namespace {

// Runs `decode`; an image error without an offset gets the record's, so the message
// points into the TFRecord file.
template <typename F>
void RethrowWithOffset(const std::string& source, uint64_t offset, F decode) {
  try {
    decode();
  } catch (const DataError& e) {
    if (e.offset()) throw;
    throw DataError(source, offset, e.reason());
  }
}

// Whether `config` reads one folder of image files.
bool ReadsImageFolder(const ImagePipelineConfig& config) {
  return config.patterns.size() == 1 && IsDirectory(config.patterns[0]);
}

// The records of an image pipeline: image files for a folder, else TFRecord files.
Pipeline<Record> Records(const ImagePipelineConfig& config, bool shuffle) {
  const std::optional<ShardRule> rule = RecordShardRule(config);
  if (rule == ShardRule::kStrided) {
    Pipeline<Record> files(ImageFiles(config.patterns[0], shuffle));
    return config.num_shards > 1 ? files.Shard(config.num_shards, config.shard_index) : files;
  }
  if (config.num_shards > 1 && config.shard_policy != ShardPolicy::kFile) {
    // DATA (or AUTO) sharding decides per file count inside ShardedTfRecords.
    return Pipeline<Record>(ShardedTfRecords(config.patterns, config.num_shards,
                                             config.shard_index, config.shard_policy));
  }
  Pipeline<std::string> files(ListFiles(config.patterns, shuffle));
  if (config.num_shards > 1) files = files.Shard(config.num_shards, config.shard_index);
  // A reader of network storage mostly waits for answers: one per file read at once,
  // however few the CPUs.
  const bool network = std::any_of(config.patterns.begin(), config.patterns.end(),
                                   [](const std::string& p) { return IsUrl(p); });
  const int readers = network && config.reader_threads == kAutotune ? config.cycle_length : config.reader_threads;
  return files.Interleave(
      [](const std::string& file) { return TfRecordFiles(FromVector<std::string>({file})); },
      config.cycle_length, 1, readers);
}

}  // namespace

std::optional<ShardRule> RecordShardRule(const ImagePipelineConfig& config) {
  if (ReadsImageFolder(config)) return ShardRule::kStrided;
  if (config.shard_policy == ShardPolicy::kData) return ShardRule::kContiguous;
  return std::nullopt;
}

namespace {

// The encoded image and label of a record, viewed in place: in the record's data (an
// image file), or in `example` (parsed from it, read by `schema`), which must outlive
// the view.
ImageView ViewEncodedImage(const Record& record, const RecordSchema& schema, Example* example) {
  if (record.origin == RecordOrigin::kFile) return {record.data, record.label};
  return ViewImage(record.data, schema, record.source, record.offset, example);
}

}  // namespace

EncodedImage ExtractEncodedImage(Record&& record, const RecordSchema& schema) {
  if (record.origin == RecordOrigin::kFile) return {std::move(record.data), record.label};
  Example example;
  ImageView view = ViewEncodedImage(record, schema, &example);
  return {std::string(view.bytes), view.label};
}

namespace {

// The writer of `bytes`-byte samples: `preprocess(encoded, path, seed, out)` writes them.
template <typename Preprocess>
SampleWriter WriterOf(size_t bytes, const RecordSchema& schema, Preprocess preprocess) {
  auto write = [preprocess, schema](Record&& record, const MapContext& c, uint8_t* out) {
    Example example;  // holds the bytes the view points into
    ImageView image = ViewEncodedImage(record, schema, &example);
    RethrowWithOffset(record.source, record.offset,
                      [&] { preprocess(image.bytes, record.source, c.seed, out); });
    return image.label;
  };
  return SampleWriter{bytes, write};
}

}  // namespace

SampleWriter TrainSampleWriter(const TrainPreset& preset, const RecordSchema& schema) {
  return WriterOf(OutputBytes(preset.layout, preset.size), schema,
                  [preset](std::string_view encoded, const std::string& path, uint64_t seed,
                           void* out) { ApplyTrainPreset(encoded, path, preset, seed, out); });
}

SampleWriter EvalSampleWriter(const EvalPreset& preset, const RecordSchema& schema) {
  return WriterOf(OutputBytes(preset.layout, preset.crop_size), schema,
                  [preset](std::string_view encoded, const std::string& path, uint64_t,
                           void* out) { ApplyEvalPreset(encoded, path, preset, out); });
}

MapFunction<Record, Sample> TrainSampleFunction(const TrainPreset& preset,
                                                const RecordSchema& schema) {
  return SampleFunctionOf(TrainSampleWriter(preset, schema));
}

MapFunction<Record, Sample> EvalSampleFunction(const EvalPreset& preset,
                                               const RecordSchema& schema) {
  return SampleFunctionOf(EvalSampleWriter(preset, schema));
}

namespace {

// records -> (pad) -> map_and_batch(`samples`) -> (split_batch) -> prefetch.
Pipeline<Batch> Batches(const ImagePipelineConfig& config, Pipeline<Record> records, SampleWriter samples,
                        std::string map_name, bool drop_remainder) {
  if (config.pad_to > 0) records = records.Pad(config.pad_to, config.batch_size);
  Pipeline<Batch> batches = records.MapAndBatch(std::move(samples), config.map_parallelism,
                                                std::move(map_name), config.batch_size, drop_remainder,
                                                config.stand_ins);
  if (config.split_batch >= 0) batches = batches.SplitBatch(config.split_batch);
  return batches.Prefetch(config.prefetch);
}

// list_files -> (shard) -> interleave -> (repeat) -> shuffle -> Batches.
Pipeline<Batch> ShuffledBatches(const ImagePipelineConfig& config, SampleWriter samples,
                                std::string map_name) {
  Pipeline<Record> records = Records(config, config.shuffle);
  if (config.repeat) records = records.Repeat();
  if (config.shuffle && config.shuffle_buffer > 0) records = records.Shuffle(config.shuffle_buffer);
  return Batches(config, std::move(records), std::move(samples), std::move(map_name), config.drop_remainder);
}

}  // namespace

Pipeline<Batch> TrainPipeline(const ImagePipelineConfig& config, const TrainPreset& preset) {
  return ShuffledBatches(config, TrainSampleWriter(preset, config.schema), "map(train_preset)");
}

Pipeline<Batch> TrainPipeline(const ImagePipelineConfig& config, const EvalPreset& preset) {
  return ShuffledBatches(config, EvalSampleWriter(preset, config.schema), "map(eval_preset)");
}

Pipeline<Batch> EvalPipeline(const ImagePipelineConfig& config, const EvalPreset& preset) {
  Pipeline<Record> records = Records(config, /*shuffle=*/false);
  if (config.repeat) records = records.Repeat();
  return Batches(config, std::move(records), EvalSampleWriter(preset, config.schema), "map(eval_preset)",
                 /*drop_remainder=*/false);
}

}  // namespace imgpipe::pipeline
