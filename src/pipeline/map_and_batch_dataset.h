// map_and_batch(writer, parallelism, batch_size): map and batch fused, as tf.data's
// map_and_batch fusion does: the map's workers write each sample straight into its
// place in the batch buffer, so no sample buffer is filled and then copied (a float32
// 224x224 image is 600 KB). The batches are exactly those of
// Map(SampleFunctionOf(writer)).Batch(batch_size) in deterministic mode: the same
// samples (per-element seeds as the map's), in the same order, bad elements skipped or
// failed by the same policy (or, with stand-ins, replaced); in either mode samples are
// batched in input order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "pipeline/dataset.h"
#include "pipeline/element.h"
#include "pipeline/map_dataset.h"

namespace imgpipe::pipeline {

// Writes one element's sample, `sample_bytes` bytes, to `out` and returns its label.
// Throws DataError for a bad element (the error policy applies), as a map function does.
struct SampleWriter {
  size_t sample_bytes = 0;
  std::function<int64_t(Record&&, const MapContext&, uint8_t* out)> write;
};

// The writer as a map function: each sample in its own buffer from the context's pool.
MapFunction<Record, Sample> SampleFunctionOf(SampleWriter writer);

// Batches of `batch_size` (> 0) samples written by `writer` on `parallelism` threads
// (kAutotune: tuned), named `name` in statistics (the workers' stage; the batches'
// stage is "batch"). The last, partial batch is emitted unless `drop_remainder`.
// With `stand_ins`, an element skipped under the skip policy is not dropped: its place
// gets a copy (pixels and label) of the last good sample before it in input order (before
// the first good sample: of that one), marked 1 in Batch::stand_ins and counted in the
// batch stage's stand_ins, so batch sizes and counts are those of a data set without
// bad elements. A pass whose every element failed still ends as with skips.
// State: the input's, the elements pulled but not yet batched (mapped again on restore
// with the same seeds), the pixels, labels and stand-in marks of the samples gathered
// for the next batch, and the copy of the last good sample.
DatasetPtr<Batch> MapAndBatch(DatasetPtr<Record> input, SampleWriter writer, int parallelism,
                              std::string name, size_t batch_size, bool drop_remainder,
                              bool stand_ins = false);

}  // namespace imgpipe::pipeline
