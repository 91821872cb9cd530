#include "extract/feature_extractor.h"

#include <ATen/Parallel.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>

#include "extract/extract_output.h"
#include "extract/extract_plan.h"
#include "extract/feature_model.h"
#include "image/presets.h"
#include "pipeline/pipeline.h"
#include "pipeline/record_schema.h"
#include "record/example.h"
#include "record/image_feature_keys.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/file.h"
#include "util/logging.h"
#include "util/thread_pool.h"

namespace imgpipe::extract {
namespace {

using nlohmann::json;
using pipeline::Batch;
using pipeline::MapContext;
using pipeline::MapFunction;
using pipeline::Pipeline;
using pipeline::Record;
using pipeline::Sample;
using Clock = std::chrono::steady_clock;

// What the map function learns about a row besides its pixels.
struct RowInfo {
  std::string id;
  int64_t label = -1;
  std::optional<RowFailure> failure;
};

// The RowInfo of each row of a shard, by the row's position (MapContext::index; the map
// reads the shard's source directly, so index = row). Filled by the map's threads.
class RowTable {
 public:
  void Set(uint64_t row, RowInfo info) {
    std::lock_guard<std::mutex> lock(mu_);
    if (row >= rows_.size()) rows_.resize(row + 1);
    rows_[row] = std::move(info);
  }
  std::vector<RowInfo> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(rows_);
  }

 private:
  std::mutex mu_;
  std::vector<RowInfo> rows_;  // guarded by mu_
};

// A sample of `preset`'s size for row `c.index`: `decode(pixels)` fills it; when that
// throws an imgpipe Error (unreadable, not an image, corrupt), the pixels are zeros and
// the row is marked failed with the reason. Records the row in `table`.
template <typename Decode>
Sample MakeRow(const EvalPreset& preset, const MapContext& c, const std::string& file,
               uint64_t offset, RowInfo info, RowTable& table, Decode decode) {
  Sample sample;
  sample.pixels = c.pool->Get(OutputBytes(preset.layout, preset.crop_size));
  sample.source = file;
  sample.offset = offset;
  try {
    decode(&info, sample.pixels.data());
  } catch (const pipeline::LabelOutOfRange&) {
    throw;  // a wrong data set or --label-offset, not a bad row
  } catch (const DataError& e) {
    info.failure = RowFailure{c.index, file, offset, info.id, e.reason()};
  } catch (const Error& e) {
    info.failure = RowFailure{c.index, file, offset, info.id, e.what()};
  }
  if (info.failure) std::memset(sample.pixels.data(), 0, sample.pixels.size());
  sample.label = info.label;
  table.Set(c.index, std::move(info));
  return sample;
}

// A TFRecord record (a tf.train.Example from imgpipe convert or TensorFlow, read by
// `schema`) -> its row.
MapFunction<Record, Sample> TfRecordRowFunction(const EvalPreset& preset,
                                                const pipeline::RecordSchema& schema,
                                                std::shared_ptr<RowTable> table) {
  return [preset, schema, table](Record&& record, const MapContext& c) {
    RowInfo info;
    info.id = BaseName(record.source) + ":" + std::to_string(record.offset);
    return MakeRow(preset, c, record.source, record.offset, std::move(info), *table,
                   [&](RowInfo* row, uint8_t* pixels) {
      Example example = ParseExample(record.data, record.source, record.offset);
      if (auto name = GetBytesFeature(example.features(), image_keys::kFilename)) row->id = *name;
      if (auto name = GetBytesFeature(example.features(), "file_name")) row->id = *name;  // TFDS
      pipeline::ImageView image = ViewImage(example.features(), schema, record.source, record.offset);
      row->label = image.label;
      ApplyEvalPreset(image.bytes, record.source, preset, pixels);
    });
  };
}

// The path of image `images[c.index]` -> its row.
MapFunction<std::string, Sample> ImageFileRowFunction(
    const EvalPreset& preset, std::shared_ptr<std::vector<InputImage>> images,
    std::shared_ptr<RowTable> table) {
  return [preset, images, table](std::string&& path, const MapContext& c) {
    const InputImage& image = (*images)[c.index];
    RowInfo info;
    info.id = image.name;
    info.label = image.label;
    return MakeRow(preset, c, path, 0, std::move(info), *table, [&](RowInfo*, uint8_t* pixels) {
      std::string encoded = ReadFile(path);
      ApplyEvalPreset(encoded, path, preset, pixels);
    });
  };
}

// One shard to extract, with the model and settings of the run.
struct ShardJob {
  const ExtractPlan* plan;
  const PlannedShard* shard;
  FeatureModel* model;
  EvalPreset preset;
  int64_t dimension = 0;
  bool half = false;
  size_t batch_size = 0;
  int threads = 0;
};

// The batches of `job`'s shard: its records -> rows (eval preset; bad ones zero, their
// ids, labels and failures in `table`) -> batches of job.batch_size.
auto ShardBatches(const ShardJob& job, const std::shared_ptr<RowTable>& table) {
  Pipeline<Sample> samples = [&] {
    if (job.plan->kind == InputKind::kTfRecord) {
      return Pipeline<Record>(pipeline::TfRecordFiles(
                                  pipeline::FromVector<std::string>({job.shard->tfrecord_file})))
          .Map(TfRecordRowFunction(job.preset, job.plan->schema, table), pipeline::kAutotune, "map(extract_row)");
    }
    auto images = std::make_shared<std::vector<InputImage>>();
    std::vector<std::string> paths;
    for (size_t i = 0; i < job.shard->image_count; ++i) {
      images->push_back(job.plan->images.image(job.shard->first_image + i));
      paths.push_back(images->back().path);
    }
    return Pipeline<std::string>(pipeline::FromVector(std::move(paths)))
        .Map(ImageFileRowFunction(job.preset, images, table), pipeline::kAutotune,
             "map(extract_row)");
  }();
  return samples.Batch(job.batch_size).Prefetch(pipeline::kAutotune);
}

// Moves `table`'s ids, labels and failures by row into `arrays` and `result`; the
// features of failed rows become zeros. Throws Error when the rows and records differ.
void TakeRowInfo(RowTable& table, ShardArrays* arrays, ShardResult* result) {
  std::vector<RowInfo> infos = table.Take();
  if (infos.size() != result->rows) {
    throw Error("shard " + std::to_string(result->index) + ": " + std::to_string(result->rows) +
                " rows extracted but " + std::to_string(infos.size()) + " records mapped");
  }
  const size_t row_bytes = arrays->features.size() / std::max<uint64_t>(result->rows, 1);
  for (RowInfo& info : infos) {
    if (info.failure) {
      std::memset(arrays->features.data() + info.failure->row * row_bytes, 0, row_bytes);
      result->failures.push_back(std::move(*info.failure));
    }
    arrays->ids.push_back(std::move(info.id));
    arrays->labels.push_back(info.label);
  }
}

// Extracts one shard into `arrays`; `on_batch(rows)` after each batch.
ShardResult ExtractShard(const ShardJob& job, ShardArrays* arrays,
                         const std::function<void(uint64_t)>& on_batch) {
  const auto start = Clock::now();
  auto table = std::make_shared<RowTable>();
  // 1. The shard's records -> rows -> batches.
  pipeline::PipelineOptions options;
  options.error_policy = ErrorPolicy::kFail;  // corrupt TFRecord framing: stop, never drop rows
  options.cpu_budget = job.threads;
  auto batches = ShardBatches(job, table);
  auto it = batches.MakeIterator(options);

  // 2. Batches through the model, rows appended in order.
  ShardResult result;
  result.index = job.shard->index;
  const int64_t size = job.preset.crop_size;
  while (true) {
    const auto wait_start = Clock::now();
    std::optional<Batch> batch = it.Next();
    result.input_wait_seconds += SecondsSince(wait_start);
    if (!batch) break;
    const auto n = static_cast<int64_t>(batch->size);
    torch::Tensor images = torch::from_blob(batch->data.data(), {n, 3, size, size}, torch::kFloat32);
    torch::Tensor rows = job.model->Run(images);
    if (rows.size(0) != n || rows.size(1) != job.dimension) {
      throw Error(job.model->description().path + ": layer gives " + std::to_string(rows.size(0)) +
                  " x " + std::to_string(rows.size(1)) + " for a batch of " + std::to_string(n) +
                  ", expected " + std::to_string(n) + " x " + std::to_string(job.dimension));
    }
    if (job.half) rows = rows.to(torch::kHalf).contiguous();
    arrays->features.append(static_cast<const char*>(rows.data_ptr()), rows.nbytes());
    result.rows += static_cast<uint64_t>(n);
    if (on_batch) on_batch(static_cast<uint64_t>(n));
  }

  // 3. Ids, labels and failures by row.
  TakeRowInfo(*table, arrays, &result);
  result.seconds = SecondsSince(start);
  return result;
}

// Throws Error for a missing or invalid option, before any work.
void CheckOptions(const ExtractOptions& o) {
  if (o.data.empty()) throw Error("--data is required");
  if (o.model.empty()) throw Error("--model is required");
  if (o.output.empty()) throw Error("--out is required");
  if (o.num_workers < 1 || o.worker < 0 || o.worker >= o.num_workers) {
    throw Error("--worker must be in [0, --num-workers)");
  }
  if (o.batch_size < 1) throw Error("--batch-size must be at least 1");
  if (o.image_size < 0) throw Error("--image-size must not be negative");
  NpyDtypeOf(o.dtype);
}

// plan.json's document: what the run reads, with which model, and how (a resumed or
// parallel run must match it).
json PlanJson(const ExtractOptions& options, const ExtractPlan& plan, const ModelDescription& model_info,
              int image_size, int64_t dimension) {
  json shard_inputs = json::array();
  for (const PlannedShard& shard : plan.shards) shard_inputs.push_back(ShardInputJson(plan, shard));
  json plan_doc{{"format", "imgpipe.extract.plan.v1"},
                {"data", options.data},
                {"split", options.split},
                {"input_kind", plan.kind == InputKind::kTfRecord ? "tfrecord" : "images"},
                {"model", options.model},
                {"model_bytes", FileSize(options.model)},
                {"model_kind", model_info.kind},
                {"layer", options.layer},
                {"layer_resolved", model_info.layer_resolved},
                {"dimension", dimension},
                {"dtype", options.dtype},
                {"image_size", image_size},
                {"batch_size", options.batch_size},
                {"shard_rows", plan.kind == InputKind::kImages ? json(options.shard_rows) : json()},
                {"shards", shard_inputs}};
  // Only when on, so that folders written before the option existed still resume.
  if (options.draft_decode) plan_doc["draft_decode"] = true;
  return plan_doc;
}

// This worker's shards still to extract: finished ones kept when resuming (counted in
// summary->shards_resumed), the others cleared.
std::vector<const PlannedShard*> ShardsToDo(const ExtractOptions& options, const ExtractPlan& plan,
                                            ExtractOutput& output, ExtractSummary* summary) {
  std::vector<const PlannedShard*> todo;
  for (const PlannedShard& shard : plan.shards) {
    if (!ShardBelongsToWorker(shard.index, options.worker, options.num_workers)) continue;
    if (options.resume && output.LoadFinishedShard(shard.index)) {
      ++summary->shards_resumed;
      continue;
    }
    output.ClearShard(shard.index);
    todo.push_back(&shard);
  }
  return todo;
}

// Extracts and writes `todo`, one shard after the other, adding this run's counts and
// rates to `summary`; `progress` after each batch and each shard.
void ExtractShards(ShardJob job, const std::vector<const PlannedShard*>& todo, ExtractOutput& output,
                   const ExtractProgressCallback& progress, ExtractSummary* summary) {
  ExtractProgress state;
  state.shards_total = todo.size();
  double input_wait = 0, shard_seconds = 0;
  const auto start = Clock::now();
  for (const PlannedShard* shard : todo) {
    job.shard = shard;
    ShardArrays arrays;
    ShardResult result = ExtractShard(job, &arrays, [&](uint64_t rows) {
      state.rows_done += rows;
      if (progress) progress(state);
    });
    output.WriteShard(result, arrays);
    ++summary->shards_this_run;
    summary->rows_this_run += result.rows;
    summary->failures_this_run += result.failures.size();
    input_wait += result.input_wait_seconds;
    shard_seconds += result.seconds;
    ++state.shards_done;
    if (progress) progress(state);
  }
  summary->seconds = SecondsSince(start);
  summary->images_per_s = summary->seconds > 0 ? summary->rows_this_run / summary->seconds : 0;
  summary->input_wait_fraction = shard_seconds > 0 ? input_wait / shard_seconds : 0;
}

// Counts every worker's finished shards into `summary`, and writes the summary files
// when all are finished and this is the only worker (with several, the finalize step
// writes them, so that none races another).
void FinishSummary(const ExtractOptions& options, ExtractOutput& output, ExtractSummary* summary) {
  for (size_t i = 0; i < output.shard_count(); ++i) {
    if (std::optional<ShardResult> done = output.LoadFinishedShard(i)) {
      ++summary->shards_done;
      summary->rows_total += done->rows;
      summary->failures_total += done->failures.size();
    }
  }
  summary->complete = summary->shards_done == summary->shards_total && options.num_workers == 1 &&
                      output.WriteSummaryIfComplete();
  if (!summary->complete) summary->rows_total = summary->failures_total = 0;
}

}  // namespace

ExtractSummary RunExtract(const ExtractOptions& options, const ExtractProgressCallback& progress) {
  CheckOptions(options);
  if (options.finalize) return FinalizeExtract(options);
  // 1. The model, its crop size and row width; the plan; the output folder.
  const int threads = options.threads > 0 ? options.threads : AvailableCpus();
  at::set_num_threads(threads);
  std::unique_ptr<FeatureModel> model = LoadFeatureModel(options.model, options.layer);
  const ModelDescription& model_info = model->description();
  const int image_size = options.image_size > 0 ? options.image_size : model_info.image_size;
  const int64_t dimension = OutputDimension(*model, image_size);
  ExtractPlan plan = MakeExtractPlan(options.data, options.split, options.shard_rows, options.source);
  if (options.worker == 0 && !plan.description.empty()) LogInfo(plan.description);
  ExtractOutput output(options.output, PlanJson(options, plan, model_info, image_size, dimension));
  output.CheckOrWritePlan();

  // 2. This worker's shards: keep finished ones when resuming, clear the others.
  ExtractSummary summary;
  summary.dimension = dimension;
  summary.shards_total = plan.shards.size();
  const std::vector<const PlannedShard*> todo = ShardsToDo(options, plan, output, &summary);

  // 3. Extract and write them, one after the other.
  ShardJob job;
  job.plan = &plan;
  job.model = model.get();
  job.preset = EvalPresetForCrop(image_size, OutputLayout::kFloat32Nchw);
  job.preset.draft_decode = options.draft_decode;
  job.dimension = dimension;
  job.half = options.dtype == "float16";
  job.batch_size = options.batch_size;
  job.threads = threads;
  ExtractShards(job, todo, output, progress, &summary);

  // 4. The summary files, when every shard (of every worker) is finished.
  FinishSummary(options, output, &summary);
  return summary;
}

}  // namespace imgpipe::extract
