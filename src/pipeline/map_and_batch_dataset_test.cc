#include "pipeline/map_and_batch_dataset.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <cstring>
#include <thread>

#include "pipeline/batch_dataset.h"
#include "pipeline/pipeline.h"
#include "pipeline/pipeline_test_util.h"
#include "util/error.h"

namespace imgpipe::pipeline {
namespace {

constexpr size_t kSampleBytes = 16;

// Records "r0".."r<n-1>" with labels 0..n-1, as values.
DatasetPtr<Record> Records(size_t n) {
  std::vector<Record> records;
  for (size_t i = 0; i < n; ++i) {
    Record r;
    r.data = "r" + std::to_string(i);
    r.source = "records";
    r.offset = i;
    r.label = static_cast<int64_t>(i);
    records.push_back(std::move(r));
  }
  return MakeVectorDataset(std::move(records));
}

// Writes the record's data and the element's seed into the sample; fails (DataError)
// for every record whose number is in `bad`. Takes 0-300 us depending on the seed, so
// that parallel workers finish out of order.
SampleWriter TestWriter(std::set<int> bad = {}) {
  SampleWriter writer;
  writer.sample_bytes = kSampleBytes;
  writer.write = [bad](Record&& record, const MapContext& c, uint8_t* out) {
    std::this_thread::sleep_for(std::chrono::microseconds(100 * (c.seed % 4)));
    if (bad.count(std::stoi(record.data.substr(1)))) {
      throw DataError(record.source, record.offset, "bad test record");
    }
    std::memset(out, '.', kSampleBytes);
    std::memcpy(out, record.data.data(), std::min(record.data.size(), size_t{8}));
    std::memcpy(out + 8, &c.seed, 8);
    return record.label;
  };
  return writer;
}

std::vector<std::string> FusedViews(size_t records, const SampleWriter& writer, int threads,
                                    size_t batch, bool drop, const PipelineOptions& options = {}) {
  return ElementViews(
      Collect(MapAndBatch(Records(records), writer, threads, "map", batch, drop), SIZE_MAX, options));
}

std::vector<std::string> UnfusedViews(size_t records, const SampleWriter& writer, size_t batch,
                                      bool drop) {
  return ElementViews(Collect(BatchSamples(Map<Record, Sample>(Records(records), SampleFunctionOf(writer), 1, "map"),
                                           batch, drop)));
}

// The fused stage gives exactly map-then-batch's batches, for any thread count, batch
// size and remainder policy, with bad elements skipped anywhere (also at batch edges).
TEST(MapAndBatchDataset, EqualsMapThenBatch) {
  const std::set<int> bad = {0, 3, 4, 11, 12, 13, 23, 38};
  for (size_t batch : {1, 3, 8}) {
    for (bool drop : {false, true}) {
      const std::vector<std::string> want = UnfusedViews(40, TestWriter(bad), batch, drop);
      ASSERT_EQ(want.size(), drop ? 32 / batch : (32 + batch - 1) / batch);
      for (int threads : {1, 2, 4}) {
        SCOPED_TRACE("batch " + std::to_string(batch) + (drop ? " drop" : "") + ", " +
                     std::to_string(threads) + " threads");
        EXPECT_EQ(FusedViews(40, TestWriter(bad), threads, batch, drop), want);
      }
    }
  }
}

// Not deterministic: still the same batches (samples are batched in input order).
TEST(MapAndBatchDataset, InputOrderWithoutDeterminism) {
  PipelineOptions fast;
  fast.deterministic = false;
  const std::set<int> bad = {5, 6, 17};
  EXPECT_EQ(FusedViews(50, TestWriter(bad), 4, 6, false, fast),
            UnfusedViews(50, TestWriter(bad), 6, false));
}

TEST(MapAndBatchDataset, SaveRestoreAtEveryCut) {
  for (int threads : {1, 3}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    std::vector<std::string> reference = CheckSaveRestoreAtEveryCut(
        [threads] { return MapAndBatch(Records(30), TestWriter({2, 9, 10, 29}), threads, "map", 4, false); },
        100);
    EXPECT_EQ(reference, UnfusedViews(30, TestWriter({2, 9, 10, 29}), 4, false));
  }
}

TEST(MapAndBatchDataset, FailPolicyStopsAtTheBadElement) {
  PipelineOptions strict;
  strict.error_policy = ErrorPolicy::kFail;
  auto it = MapAndBatch(Records(20), TestWriter({9}), 3, "map", 4, false)
                ->MakeIterator(MakeTestContext(strict));
  ASSERT_TRUE(it->Next());  // records 0-3
  ASSERT_TRUE(it->Next());  // 4-7
  try {
    it->Next();
    FAIL() << "record 9 should fail the pass";
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), "records");
    EXPECT_EQ(e.offset(), 9u);
  }
}

// Other exceptions of the writer reach the caller whatever the policy.
TEST(MapAndBatchDataset, WriterErrorsReachTheCaller) {
  SampleWriter broken{kSampleBytes, [](Record&&, const MapContext&, uint8_t*) -> int64_t {
                        throw Error("writer broke");
                      }};
  EXPECT_THROW(Collect(MapAndBatch(Records(5), broken, 2, "map", 2, false)), Error);
  EXPECT_THROW(MapAndBatch(Records(5), TestWriter(), 2, "map", 0, false), Error);
  EXPECT_THROW(MapAndBatch(Records(5), TestWriter(), 0, "map", 2, false), Error);
  EXPECT_THROW(MapAndBatch(Records(5), SampleWriter{}, 2, "map", 2, false), Error);
}

// The batches stand-ins give: record i's sample (as the writer writes it with no bad
// record) for a good i; for a bad one, the last good sample before it, or the first
// good one when none came before; batched in order, each bad place marked 1.
std::vector<std::string> StandInViews(size_t records, const std::set<int>& bad, size_t batch, bool drop) {
  const std::vector<Batch> singles = Collect(MapAndBatch(Records(records), TestWriter(), 1, "map", 1, false));
  std::optional<size_t> first_good;
  for (size_t i = 0; i < records && !first_good; ++i) {
    if (!bad.count(static_cast<int>(i))) first_good = i;
  }
  std::vector<std::string> out;
  Batch current;
  std::string pixels;
  size_t last_good = first_good.value_or(0);
  for (size_t i = 0; i < records; ++i) {
    const bool is_bad = bad.count(static_cast<int>(i)) > 0;
    if (!is_bad) last_good = i;
    const Batch& from = singles[is_bad ? last_good : i];
    pixels.append(reinterpret_cast<const char*>(from.data.data()), kSampleBytes);
    current.labels.push_back(from.labels[0]);
    current.stand_ins.push_back(is_bad ? 1 : 0);
    if (current.labels.size() == batch || (i + 1 == records && !drop)) {
      current.size = current.labels.size();
      current.sample_bytes = kSampleBytes;
      current.data = BufferPool::Default()->Get(pixels.size());
      std::memcpy(current.data.data(), pixels.data(), pixels.size());
      if (std::all_of(current.stand_ins.begin(), current.stand_ins.end(), [](uint8_t m) { return m == 0; })) {
        current.stand_ins.clear();
      }
      out.push_back(ElementView(current));
      current = Batch();
      pixels.clear();
    }
  }
  return out;
}

std::vector<std::string> StandInFusedViews(size_t records, const std::set<int>& bad, int threads, size_t batch,
                                           bool drop, const PipelineOptions& options = {}) {
  return ElementViews(Collect(MapAndBatch(Records(records), TestWriter(bad), threads, "map", batch, drop,
                                          /*stand_ins=*/true),
                              SIZE_MAX, options));
}

// With stand-ins a bad element keeps its place: the batch count and sizes are those of
// a data set without bad elements, each bad place holds a copy of the last good sample
// (the first good one at the start) and is marked. Bad elements at the start, in the
// middle, at batch edges, whole batches of them and at the end.
TEST(MapAndBatchDataset, StandInsKeepEveryPlace) {
  const std::set<int> bad = {0, 1, 3, 4, 11, 12, 13, 14, 15, 16, 23, 38, 39};
  for (size_t batch : {1, 3, 8}) {
    for (bool drop : {false, true}) {
      const std::vector<std::string> want = StandInViews(40, bad, batch, drop);
      ASSERT_EQ(want.size(), drop ? 40 / batch : (40 + batch - 1) / batch);
      for (int threads : {1, 2, 4}) {
        SCOPED_TRACE("batch " + std::to_string(batch) + (drop ? " drop" : "") + ", " +
                     std::to_string(threads) + " threads");
        EXPECT_EQ(StandInFusedViews(40, bad, threads, batch, drop), want);
      }
    }
  }
  PipelineOptions fast;
  fast.deterministic = false;
  EXPECT_EQ(StandInFusedViews(40, bad, 4, 6, false, fast), StandInViews(40, bad, 6, false));
}

// The stand-ins are counted in the batch stage; the bad elements in the map's errors.
TEST(MapAndBatchDataset, StandInsAreCounted) {
  PipelineIterator<Batch> it(MapAndBatch(Records(20), TestWriter({2, 7, 19}), 2, "map", 4, false, true), PipelineOptions(), 0);
  size_t samples = 0;
  while (auto b = it.Next()) samples += b->size;
  EXPECT_EQ(samples, 20u);
  uint64_t stand_ins = 0, errors = 0;
  for (const StageSnapshot& s : it.Stats()) {
    stand_ins += s.stand_ins;
    errors += s.errors;
  }
  EXPECT_EQ(stand_ins, 3u);
  EXPECT_EQ(errors, 3u);
}

// A state saved anywhere, also while the first batches wait for a good sample (every
// element of the first two batches bad), resumes to the same batches.
TEST(MapAndBatchDataset, StandInsSaveRestoreAtEveryCut) {
  for (int threads : {1, 3}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    const std::set<int> bad = {0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 17, 29};
    std::vector<std::string> reference = CheckSaveRestoreAtEveryCut(
        [&] { return MapAndBatch(Records(30), TestWriter(bad), threads, "map", 4, false, true); }, 100);
    EXPECT_EQ(reference, StandInViews(30, bad, 4, false));
  }
}

// With nothing good to copy, the pass ends as with skips: the only-bad rule throws.
TEST(MapAndBatchDataset, StandInsNeedOneGoodElement) {
  std::set<int> all;
  for (int i = 0; i < 6; ++i) all.insert(i);
  PipelineIterator<Batch> it(MapAndBatch(Records(6), TestWriter(all), 2, "map", 4, false, true), PipelineOptions(), 0);
  EXPECT_THROW(it.Next(), Error);
}

// In steady state the batch buffers are recycled: a long run allocates a handful.
TEST(MapAndBatchDataset, BatchBuffersAreRecycled) {
  IteratorContext ctx = MakeTestContext();
  auto endless = std::make_shared<GeneratorDataset<Record>>(-1, [](uint64_t, size_t i) {
    Record r;
    r.data = "r" + std::to_string(i % 1000);
    r.label = static_cast<int64_t>(i);
    return r;
  });
  SampleWriter quick = TestWriter();
  auto it = MapAndBatch(endless, quick, 2, "map", 8, true)->MakeIterator(ctx);
  for (int i = 0; i < 200; ++i) {
    std::optional<Batch> b = it->Next();
    ASSERT_TRUE(b);
    ASSERT_EQ(b->size, 8u);
    ASSERT_EQ(b->labels.front(), 8 * i);
  }
  EXPECT_LE(ctx.pool->allocations(), 12u);
}

}  // namespace
}  // namespace imgpipe::pipeline
