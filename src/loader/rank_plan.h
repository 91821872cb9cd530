// What one rank of a Loader reads and yields per epoch (RankPlan), and the pipeline
// that yields it. Every rank yields the same number of batches per epoch, whatever
// `last_batch` does with the records that do not fill a batch.
#pragma once

#include <cstdint>

#include "loader/loader_data.h"
#include "loader/loader_options.h"
#include "pipeline/element.h"
#include "pipeline/pipeline.h"

namespace imgpipe::loader {

// Every rank yields `batches` batches:
// - drop: the smallest shard's whole batches (the rest of each shard is dropped);
// - partial: ceil(largest shard / batch_size); a rank whose shard gives one batch fewer
//   splits its last full batch in two (`split_batch`);
// - pad: the same count, every batch full: the shard is padded to batches * batch_size
//   with repeats of its first samples (`pad_to`); samples at positions >= `samples`
//   of the rank's sequence are padding.
struct RankPlan {
  int64_t samples = 0;   // records in this rank's shard
  int64_t batches = 0;   // batches per epoch, equal on every rank
  int64_t pad_to = 0;    // pipeline::ImagePipelineConfig::pad_to
  int64_t split_batch = -1;  // pipeline::ImagePipelineConfig::split_batch
};

// The plan for `o.rank`, its shard counted by the pipeline's own rule
// (pipeline::RecordShardRule); throws InvalidArgument when a rank would get no batch,
// or for last_batch="partial" with batch_size 1 when the shards differ (nothing to
// split), on every rank alike.
RankPlan PlanRank(const LoaderData& data, const LoaderOptions& o);

// The pipeline of this rank's batches for these options, with `plan`'s padding or
// split: the train or eval preset, shuffled or not (ShufflesRecords).
pipeline::Pipeline<pipeline::Batch> BuildBatches(const LoaderData& data, const LoaderOptions& o,
                                                 const RankPlan& plan);

}  // namespace imgpipe::loader
