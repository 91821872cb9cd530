// The Loader over real photos: its epochs are the pipeline's, batch for batch, whether
// or not the next epoch's pass starts ahead; its state resumes exactly at every epoch
// boundary, with the train preset's policy and random erasing too; it refuses options
// whose buffers cannot fit, and bad options naming them.
#include "loader/loader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "loader/loader_data.h"
#include "loader/loader_pass.h"
#include "loader/loader_test_util.h"
#include "loader/rank_plan.h"
#include "pipeline/buffer_pool.h"
#include "util/error.h"

namespace imgpipe::loader {
namespace {

// The rest of `pass`'s batches.
std::vector<std::string> Drain(LoaderPass& pass) {
  std::vector<std::string> views;
  while (std::optional<LoaderBatch> b = pass.Next()) views.push_back(View(*b));
  return views;
}

// Epoch `epoch` of a fresh loader that starts nothing ahead.
std::vector<std::string> FreshEpoch(int64_t epoch, LoaderOptions o = SmallOptions()) {
  o.start_ahead = false;
  Loader loader(kPhotos, o);
  loader.SetEpoch(epoch);
  return Drain(*loader.Iterate());
}

TEST(Loader, EpochsStartedAheadAreTheFreshPipelinesEpochs) {
  Loader loader(kPhotos, SmallOptions());
  ASSERT_EQ(loader.size(), 153 / 16);
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    loader.SetEpoch(epoch);
    std::shared_ptr<LoaderPass> pass = loader.Iterate();
    // 1. From the second epoch on, the pass was started before the last one ended, at
    //    least two batches before its end (start-up time over batch time, plus one).
    if (epoch > 0) {
      EXPECT_TRUE(pass->started_ahead()) << "epoch " << epoch;
    }
    std::vector<std::string> batches = Drain(*pass);
    ASSERT_EQ(static_cast<int64_t>(batches.size()), loader.size());
    ASSERT_TRUE(pass->near_end_at().has_value());
    EXPECT_LE(*pass->near_end_at(), loader.size() - 2);
    // 2. The batches are those of a fresh pass over the epoch.
    EXPECT_EQ(batches, FreshEpoch(epoch)) << "epoch " << epoch;
  }
}

// A pass that has yielded fewer than two batches cannot time its own pace, so it times
// the next pass's start by the pace its loader measured last: a start-up as long as the
// whole epoch starts the next pass at the first batch (an epoch of a few batches, over a
// far store, would otherwise start the next one too late). Without a measure it waits.
TEST(Loader, APassStartsTheNextByTheLastPassesPace) {
  const LoaderOptions o = SmallOptions();
  const LoaderData data = ResolveLoaderData(kPhotos, DataSourceOptionsOf(o), "", ErrorPolicy::kFail);
  const RankPlan plan = PlanRank(data, o);
  const pipeline::Pipeline<pipeline::Batch> batches = BuildBatches(data, o, plan);
  for (const bool measured : {false, true}) {
    SCOPED_TRACE(measured ? "a slow start measured" : "nothing measured");
    auto pace = std::make_shared<PassPace>();
    if (measured) pace->Record({/*startup_seconds=*/10.0, /*interval_seconds=*/0.001});
    LoaderPass pass(batches, PipelineOptionsOf(o), 0, plan, o, pipeline::BufferPool::Create(), pace);
    int near_ends = 0;
    pass.SetOnNearEnd([&] { ++near_ends; });
    ASSERT_TRUE(pass.Next());
    EXPECT_EQ(near_ends, measured ? 1 : 0);
    EXPECT_EQ(pass.near_end_at(), measured ? std::optional<int64_t>(0) : std::nullopt);
    Drain(pass);
    EXPECT_EQ(near_ends, 1);
    // The pass recorded its own pace: a start-up and an interval it measured.
    ASSERT_TRUE(pace->Last());
    EXPECT_GT(pace->Last()->interval_seconds, 0);
    EXPECT_LT(pace->Last()->startup_seconds, 10.0);
  }
}

TEST(Loader, NothingStartsAheadPastTheEpochLimit) {
  Loader loader(kPhotos, SmallOptions());
  loader.SetEpochLimit(2);  // epochs 0 and 1
  loader.SetEpoch(0);
  Drain(*loader.Iterate());
  loader.SetEpoch(1);
  std::shared_ptr<LoaderPass> last = loader.Iterate();
  EXPECT_TRUE(last->started_ahead());
  Drain(*last);
  loader.SetEpoch(2);  // past the limit: still served, but it was not started ahead
  std::shared_ptr<LoaderPass> past = loader.Iterate();
  EXPECT_FALSE(past->started_ahead());
  EXPECT_EQ(Drain(*past), FreshEpoch(2));
}

// Saves a loader of options `o` after epoch 0 and after epoch 1's first batch, loads
// each state (as bytes) into a fresh loader and expects the rest of epoch 1 exactly.
void ExpectStatesResumeExactly(const LoaderOptions& o) {
  const std::vector<std::string> epoch0 = FreshEpoch(0, o), epoch1 = FreshEpoch(1, o);
  // Cuts: after the last batch of epoch 0, and after the first batch of epoch 1.
  for (int cut : {0, 1}) {
    Loader loader(kPhotos, o);
    loader.SetEpoch(0);
    Drain(*loader.Iterate());
    std::vector<std::string> seen;
    if (cut == 1) {
      loader.SetEpoch(1);
      std::shared_ptr<LoaderPass> pass = loader.Iterate();
      seen.push_back(View(*pass->Next()));
    }
    // The state travels as bytes (a checkpoint), into a loader that never ran.
    const LoaderState state = DeserializeLoaderState(SerializeLoaderState(loader.State()));
    loader.Close();
    Loader resumed(kPhotos, o);
    resumed.LoadState(state);
    std::vector<std::string> rest = Drain(*resumed.Iterate());
    if (cut == 0) {
      EXPECT_TRUE(rest.empty()) << "epoch 0 was over";
      resumed.SetEpoch(1);
      rest = Drain(*resumed.Iterate());
    }
    seen.insert(seen.end(), rest.begin(), rest.end());
    EXPECT_EQ(seen, epoch1) << "cut " << cut;
  }
  EXPECT_NE(epoch0, epoch1);  // epochs reshuffle
}

TEST(Loader, StateAtEveryEpochBoundaryResumesExactly) { ExpectStatesResumeExactly(SmallOptions()); }

// The train preset's policy and random erasing draw from the seed alone: a state resumes
// them exactly; they change the batches; a loader without them refuses their state.
TEST(Loader, AugmentedStateResumesExactly) {
  LoaderOptions o = SmallOptions();
  o.augment.auto_augment = "ta_wide";
  o.augment.random_erase = 0.25;
  ExpectStatesResumeExactly(o);
  EXPECT_NE(FreshEpoch(0, o), FreshEpoch(0));
  Loader augmented(kPhotos, o), plain(kPhotos, SmallOptions());
  try {
    plain.LoadState(DeserializeLoaderState(SerializeLoaderState(augmented.State())));
    FAIL() << "a ta_wide state was loaded by a loader without a policy";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("auto_augment='ta_wide', this loader has 'none'"), std::string::npos)
        << e.what();
  }
}

// resize_size sets the eval preset's resize; 0 is image_size * 256 / 224 (36 for 32).
TEST(Loader, EvalResizeSize) {
  LoaderOptions o = SmallOptions();
  o.preset = "eval";
  const std::vector<std::string> automatic = FreshEpoch(0, o);
  o.resize_size = 36;
  EXPECT_EQ(FreshEpoch(0, o), automatic);
  o.resize_size = 64;
  EXPECT_NE(FreshEpoch(0, o), automatic);
}

TEST(Loader, AbandonedEpochLeavesTheNextOneWhole) {
  Loader loader(kPhotos, SmallOptions());
  loader.SetEpoch(0);
  std::shared_ptr<LoaderPass> pass = loader.Iterate();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(pass->Next());
  loader.SetEpoch(1);
  EXPECT_EQ(Drain(*loader.Iterate()), FreshEpoch(1));
  // The abandoned pass yields nothing more once closed.
  pass->Close();
  EXPECT_FALSE(pass->Next());
}

TEST(Loader, StateOfAnotherLoaderIsRefusedNamingTheOption) {
  Loader loader(kPhotos, SmallOptions());
  LoaderOptions other = SmallOptions();
  other.seed = 8;
  Loader different(kPhotos, other);
  try {
    different.LoadState(loader.State());
    FAIL() << "a state of seed 7 was loaded by a loader of seed 8";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("seed=7, this loader has 8"), std::string::npos) << e.what();
  }
}

TEST(Loader, RefusesBuffersThatCannotFitBeforeAllocating) {
  LoaderOptions o = SmallOptions();
  o.batch_size = 100;
  o.image_size = 4096;
  o.layout = "float32";  // 100 x 3 x 4096 x 4096 x 4 bytes: 18.8 GiB a batch
  o.ram_budget_bytes = 1ull << 30;
  try {
    Loader loader(kPhotos, o);
    FAIL() << "a loader that needs more than 1 GiB was made";
  } catch (const InvalidArgument& e) {
    const std::string message = e.what();
    for (const char* part : {"batch_size=100", "image_size=4096", "18.8 GiB", "ram_budget_bytes", "1.0 GiB"}) {
      EXPECT_NE(message.find(part), std::string::npos) << part << " in: " << message;
    }
  }
  // The same figures, known without a loader: 3 batches and a shuffle buffer, twice.
  o.ram_budget_bytes = 0;
  const MemoryNeed need = EstimateMemory(ResolveLoaderData(kPhotos, {}, "", ErrorPolicy::kSkip), o);
  EXPECT_EQ(need.batch_bytes, 100ull * 3 * 4096 * 4096 * 4 + 100 * 8);
  EXPECT_EQ(need.passes, 2u);
  EXPECT_GT(need.shuffle_bytes, 153u * 10000);  // the photos' mean size, ~ 100 KB
  EXPECT_EQ(need.minimum_bytes, 2 * (3 * need.batch_bytes + need.shuffle_bytes));
}

TEST(Loader, BadOptionsAreInvalidArguments) {
  auto refused = [](void (*change)(LoaderOptions&), const char* expected) {
    LoaderOptions o = SmallOptions();
    change(o);
    try {
      Loader loader(kPhotos, o);
      ADD_FAILURE() << "accepted; expected " << expected;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  refused([](LoaderOptions& o) { o.preset = "big"; }, "preset");
  refused([](LoaderOptions& o) { o.layout = "nchw"; }, "layout");
  refused([](LoaderOptions& o) { o.last_batch = "keep"; }, "last_batch");
  refused([](LoaderOptions& o) { o.rank = 2; }, "world_size");
  refused([](LoaderOptions& o) { o.batch_size = 1000; }, "larger than");
  refused([](LoaderOptions& o) { o.augment.auto_augment = "autoaugment"; },
          "auto_augment must be one of 'none', 'ta_wide', 'ra', 'imagenet', not 'autoaugment'");
  refused([](LoaderOptions& o) { o.augment.ra_num_ops = -1; }, "ra_num_ops");
  refused([](LoaderOptions& o) { o.augment.ra_magnitude = 31; }, "ra_magnitude must be in [0, 30]");
  refused([](LoaderOptions& o) { o.augment.random_erase = 1.5; }, "random_erase must be in [0, 1], not 1.5");
  refused([](LoaderOptions& o) { o.augment.random_erase = -0.1; }, "random_erase");
  refused([](LoaderOptions& o) { o.preset = "eval", o.augment.auto_augment = "ra"; }, "preset 'eval' takes neither");
  refused([](LoaderOptions& o) { o.preset = "eval", o.augment.random_erase = 0.1; }, "preset 'eval' takes neither");
  refused([](LoaderOptions& o) { o.preset = "eval", o.resize_size = 16; }, "resize_size must be 0");
  refused([](LoaderOptions& o) { o.resize_size = 64; }, "resize_size applies to preset 'eval' only");
  refused([](LoaderOptions& o) { o.mixup_alpha = -0.2; }, "mixup_alpha must be >= 0");
  // CheckOptions alone, as callers that build no Loader use it, refuses the same.
  LoaderOptions mixing = SmallOptions();
  mixing.cutmix_alpha = std::nan("");
  EXPECT_THROW(CheckOptions(mixing), InvalidArgument);
  mixing.cutmix_alpha = 1.0;
  mixing.augment.ra_magnitude = -1;
  EXPECT_THROW(CheckOptions(mixing), InvalidArgument);
}

}  // namespace
}  // namespace imgpipe::loader
