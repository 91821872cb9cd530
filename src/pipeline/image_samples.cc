#include "pipeline/image_samples.h"

#include "record/example.h"
#include "record/image_feature_keys.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::pipeline {
namespace {

Sample MakeSample(const Record& record, int64_t label, size_t bytes, BufferPool* pool) {
  Sample sample;
  sample.pixels = pool->Get(bytes);
  sample.label = label;
  sample.source = record.source;
  sample.offset = record.offset;
  return sample;
}

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

// The records of an image pipeline: image files for a folder, else TFRecord files.
Pipeline<Record> Records(const ImagePipelineConfig& config, bool shuffle) {
  if (config.patterns.size() == 1 && IsDirectory(config.patterns[0])) {
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
  return files.Interleave(
      [](const std::string& file) { return TfRecordFiles(FromVector<std::string>({file})); },
      config.cycle_length, 1, config.reader_threads);
}

}  // namespace

EncodedImage ExtractEncodedImage(Record&& record) {
  if (record.origin == RecordOrigin::kFile) return {std::move(record.data), record.label};
  Example example = ParseExample(record.data, record.source, record.offset);
  auto bytes = GetBytesFeature(example.features(), image_keys::kEncoded);
  if (!bytes) {
    throw DataError(record.source, record.offset,
                    std::string("record has no bytes feature ") + image_keys::kEncoded);
  }
  auto label = GetInt64Feature(example.features(), image_keys::kLabel);
  return {std::string(*bytes), label.value_or(-1)};
}

namespace {

// Record -> Sample: `preprocess(encoded, path, seed, out)` writes `bytes` bytes of pixels.
template <typename Preprocess>
MapFunction<Record, Sample> SampleFunction(size_t bytes, Preprocess preprocess) {
  return [bytes, preprocess](Record&& record, const MapContext& c) {
    Sample sample = MakeSample(record, -1, bytes, c.pool);
    std::string source = record.source;
    EncodedImage image = ExtractEncodedImage(std::move(record));
    sample.label = image.label;
    RethrowWithOffset(source, sample.offset, [&] {
      preprocess(image.bytes, source, c.seed, sample.pixels.data());
    });
    return sample;
  };
}

}  // namespace

MapFunction<Record, Sample> TrainSampleFunction(const TrainPreset& preset) {
  return SampleFunction(OutputBytes(preset.layout, preset.size),
                        [preset](std::string_view encoded, const std::string& path, uint64_t seed,
                                 void* out) { ApplyTrainPreset(encoded, path, preset, seed, out); });
}

MapFunction<Record, Sample> EvalSampleFunction(const EvalPreset& preset) {
  return SampleFunction(OutputBytes(preset.layout, preset.crop_size),
                        [preset](std::string_view encoded, const std::string& path, uint64_t,
                                 void* out) { ApplyEvalPreset(encoded, path, preset, out); });
}

namespace {

// list_files -> (shard) -> interleave -> (repeat) -> shuffle -> map(`samples`) -> batch -> prefetch.
Pipeline<Batch> ShuffledBatches(const ImagePipelineConfig& config, MapFunction<Record, Sample> samples,
                                std::string map_name) {
  Pipeline<Record> records = Records(config, /*shuffle=*/true);
  if (config.repeat) records = records.Repeat();
  if (config.shuffle_buffer > 0) records = records.Shuffle(config.shuffle_buffer);
  return records.Map(std::move(samples), config.map_parallelism, std::move(map_name))
      .Batch(config.batch_size, config.drop_remainder)
      .Prefetch(config.prefetch);
}

}  // namespace

Pipeline<Batch> TrainPipeline(const ImagePipelineConfig& config, const TrainPreset& preset) {
  return ShuffledBatches(config, TrainSampleFunction(preset), "map(train_preset)");
}

Pipeline<Batch> TrainPipeline(const ImagePipelineConfig& config, const EvalPreset& preset) {
  return ShuffledBatches(config, EvalSampleFunction(preset), "map(eval_preset)");
}

Pipeline<Batch> EvalPipeline(const ImagePipelineConfig& config, const EvalPreset& preset) {
  Pipeline<Record> records = Records(config, /*shuffle=*/false);
  if (config.repeat) records = records.Repeat();
  return records
      .Map(EvalSampleFunction(preset), config.map_parallelism, "map(eval_preset)")
      .Batch(config.batch_size, /*drop_remainder=*/false)
      .Prefetch(config.prefetch);
}

}  // namespace imgpipe::pipeline
