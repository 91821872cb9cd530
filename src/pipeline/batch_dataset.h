// batch(batch_size): consecutive samples into one Batch whose pixels lie back to back
// in one buffer from the context's BufferPool (ctx.pool), so that in steady state no
// memory is allocated per batch.
#pragma once

#include <cstddef>

#include "pipeline/dataset.h"
#include "pipeline/element.h"

namespace imgpipe::pipeline {

// Batches of `batch_size` (> 0) samples of `input`, in order, labels in Batch.labels.
// The last, partial batch is emitted unless `drop_remainder`. All samples must have
// the same pixel byte count: a mismatch throws Error naming both sizes. State: the
// samples of the partial batch (ElementCodec<Sample>) and the input's state.
// Throws Error when batch_size is 0.
DatasetPtr<Batch> BatchSamples(DatasetPtr<Sample> input, size_t batch_size, bool drop_remainder);

}  // namespace imgpipe::pipeline
