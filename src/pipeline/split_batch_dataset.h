// split_batch: the input's batch number `index` (0-based) comes out as two batches,
// its first ceil(size / 2) samples, then the rest (copied into a buffer of the
// context's pool); every other batch passes unchanged. imgpipe.Loader uses it so that a
// rank with one full batch fewer than the others yields as many batches
// (last_batch="partial"). Saved state: batches taken from the input, the second half
// while it waits (ElementCodec<Batch>, by value) and the input's state.
#pragma once

#include <cstdint>

#include "pipeline/dataset.h"
#include "pipeline/element.h"

namespace imgpipe::pipeline {

// `input` with batch `index` split in two (see above); a batch of one sample there
// throws Error when it comes, naming the index. Throws Error when index < 0.
DatasetPtr<Batch> SplitBatch(DatasetPtr<Batch> input, int64_t index);

}  // namespace imgpipe::pipeline
