#include "pipeline/map_and_batch_dataset.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "util/error.h"

namespace imgpipe::pipeline {
namespace {

// What a worker hands on: the element's sequence number (its place in the map's input
// order) and label; its pixels are already written where BatchSlots put them.
struct PlacedSample {
  uint64_t seq = 0;
  int64_t label = -1;
  size_t bytes = 0;
};

// Map's statistics count an element's bytes (found by argument-dependent lookup).
size_t ElementBytes(const PlacedSample& s) { return s.bytes; }

// Where samples are written. Sample number f of the output (the f-th element that did
// not fail, counting from the iterator's start) ends in batch f / B at slot f % B. A
// worker does not know f when it starts: elements before it may still fail. So it
// writes at a guess, seq - (failures known before seq), which is never less than f
// (only failures reduce f, and some may not be known yet): with no failures, the guess
// is right and nothing is copied. A wrong guess costs a copy when the sample is placed.
//
// Why a guessed slot is never one another sample needs: samples are placed in input
// order; a sample placed at f came before every unplaced one, and each unplaced
// element's guess is above its own final place, which is above f. A guess below the
// next final place, or one taken by a running element (failures learnt between two
// guesses), goes to an overflow buffer instead.
//
// With stand-ins (failures_take_places), a failed element keeps its place instead: f is
// the element's sequence number, every guess is right, and nothing is ever copied.
class BatchSlots {
 public:
  BatchSlots(size_t batch_size, size_t sample_bytes, std::shared_ptr<BufferPool> pool,
             bool failures_take_places)
      : batch_size_(batch_size), sample_bytes_(sample_bytes), pool_(std::move(pool)),
        failures_take_places_(failures_take_places) {}

  // Where element `seq` (a worker's) writes its sample.
  uint8_t* Claim(uint64_t seq) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t known_failures =
        processed_failures_ +
        (failures_take_places_ ? 0
                               : static_cast<uint64_t>(std::distance(
                                     failed_unplaced_.begin(), failed_unplaced_.lower_bound(seq))));
    const uint64_t guess = seq - known_failures;
    Claimed& claim = claims_[seq];
    if (guess >= next_place_ && claimed_places_.insert(guess).second) {
      claim.place = guess;
      return SlotLocked(guess);
    }
    claim.overflow = pool_->Get(sample_bytes_);
    return claim.overflow.data();
  }

  // Element `seq` failed (a worker's): its slot is free, and later guesses count it.
  void Fail(uint64_t seq) {
    std::lock_guard<std::mutex> lock(mu_);
    ReleaseLocked(seq);
    failed_unplaced_.insert(seq);
  }

  // The failed elements not placed yet, in input order: at the end of the input, those
  // after the last good one.
  std::vector<uint64_t> FailedUnplaced() const {
    std::lock_guard<std::mutex> lock(mu_);
    return std::vector<uint64_t>(failed_unplaced_.begin(), failed_unplaced_.end());
  }

  // Element `seq`, the next in input order, failed and gets a stand-in (with
  // failures_take_places): it takes the next place, whose pixels the caller writes.
  // Returns that place.
  uint64_t PlaceStandIn(uint64_t seq) {
    std::lock_guard<std::mutex> lock(mu_);
    ReleaseLocked(seq);
    failed_unplaced_.erase(seq);
    return next_place_++;
  }

  // Copies the pixels at place `from` (placed) to place `to` (placed, a stand-in's).
  void CopySample(uint64_t from, uint64_t to) {
    std::lock_guard<std::mutex> lock(mu_);
    std::memcpy(SlotLocked(to), SlotLocked(from), sample_bytes_);
  }
  // Writes `pixels` (sample_bytes) at place `to`, or reads place `from` into `out`.
  void WriteSample(uint64_t to, const uint8_t* pixels) {
    std::lock_guard<std::mutex> lock(mu_);
    std::memcpy(SlotLocked(to), pixels, sample_bytes_);
  }
  void ReadSample(uint64_t from, uint8_t* out) {
    std::lock_guard<std::mutex> lock(mu_);
    std::memcpy(out, SlotLocked(from), sample_bytes_);
  }

  // Element `seq`, the next in input order, was skipped: it takes no place.
  void Skip(uint64_t seq) {
    std::lock_guard<std::mutex> lock(mu_);
    failed_unplaced_.erase(seq);
    ++processed_failures_;
  }

  // Element `seq`, the next in input order, succeeded: its sample goes to the next
  // place (copied there when its guess was wrong). Returns that place.
  uint64_t Place(uint64_t seq) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = claims_.find(seq);
    if (it == claims_.end()) throw Error("map_and_batch: element " + std::to_string(seq) + " was never claimed");
    const uint64_t place = next_place_++;
    uint8_t* target = SlotLocked(place);
    const uint8_t* written = it->second.place ? SlotLocked(*it->second.place) : it->second.overflow.data();
    if (written != target) std::memcpy(target, written, sample_bytes_);
    ReleaseLocked(seq);
    return place;
  }

  // The buffer of batch `b`, whose samples are all placed; its first `count` samples
  // only (copied to a buffer of that size) when count < B.
  PooledBuffer TakeBatch(uint64_t b, size_t count) {
    std::lock_guard<std::mutex> lock(mu_);
    // 1. No running element may still be writing into it (see the class comment).
    auto claimed = claimed_places_.lower_bound(b * batch_size_);
    if (claimed != claimed_places_.end() && *claimed < (b + 1) * batch_size_) {
      throw Error("map_and_batch: batch " + std::to_string(b) + " taken while slot " +
                  std::to_string(*claimed) + " is being written");
    }
    // 2. Hand it out whole, or copy the first samples.
    PooledBuffer buffer = std::move(BufferLocked(b));
    buffers_.erase(b);
    if (count == batch_size_) return buffer;
    PooledBuffer partial = pool_->Get(count * sample_bytes_);
    if (count > 0) std::memcpy(partial.data(), buffer.data(), count * sample_bytes_);
    return partial;
  }

  // The samples at places first..first+count-1, as bytes (iterator state).
  std::string CopyPlaces(uint64_t first, size_t count) {
    std::lock_guard<std::mutex> lock(mu_);
    std::string out(count * sample_bytes_, '\0');
    for (size_t i = 0; i < count; ++i) {
      std::memcpy(out.data() + i * sample_bytes_, SlotLocked(first + i), sample_bytes_);
    }
    return out;
  }

  // Restore: `placed` samples and `failures` skips came before; the samples gathered
  // since the last batch handed out are `pixels`. Call before any Claim.
  void Reset(uint64_t placed, uint64_t failures, const std::string& pixels) {
    std::lock_guard<std::mutex> lock(mu_);
    next_place_ = placed;
    processed_failures_ = failures;
    const uint64_t count = pixels.size() / sample_bytes_;
    for (uint64_t i = 0; i < count; ++i) {
      std::memcpy(SlotLocked(placed - count + i), pixels.data() + i * sample_bytes_, sample_bytes_);
    }
  }

  uint64_t placed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return next_place_;
  }
  uint64_t failures() const {
    std::lock_guard<std::mutex> lock(mu_);
    return processed_failures_;
  }
  // The sequence number of the next element in input order: every earlier one was
  // placed or skipped.
  uint64_t next_seq() const {
    std::lock_guard<std::mutex> lock(mu_);
    return next_place_ + processed_failures_;
  }

 private:
  struct Claimed {
    std::optional<uint64_t> place;  // the guessed place, or
    PooledBuffer overflow;          // a buffer of its own
  };

  PooledBuffer& BufferLocked(uint64_t b) {
    PooledBuffer& buffer = buffers_[b];
    if (buffer.empty()) buffer = pool_->Get(batch_size_ * sample_bytes_);
    return buffer;
  }
  uint8_t* SlotLocked(uint64_t place) {
    return BufferLocked(place / batch_size_).data() + (place % batch_size_) * sample_bytes_;
  }
  void ReleaseLocked(uint64_t seq) {
    auto it = claims_.find(seq);
    if (it == claims_.end()) return;
    if (it->second.place) claimed_places_.erase(*it->second.place);
    claims_.erase(it);
  }

  const size_t batch_size_;
  const size_t sample_bytes_;
  const std::shared_ptr<BufferPool> pool_;
  const bool failures_take_places_;
  mutable std::mutex mu_;
  std::map<uint64_t, PooledBuffer> buffers_;  // guarded by mu_: batch index -> B samples
  std::map<uint64_t, Claimed> claims_;        // guarded by mu_: running or unplaced elements
  std::set<uint64_t> claimed_places_;         // guarded by mu_: guesses in use
  std::set<uint64_t> failed_unplaced_;        // guarded by mu_: failed, not yet skipped
  uint64_t next_place_ = 0;                   // guarded by mu_: samples placed so far
  uint64_t processed_failures_ = 0;           // guarded by mu_: elements skipped so far
};

// Pulls placed samples from the map in input order and hands out each batch when its
// last sample is placed. Consumer's thread only, except the slots (shared with the
// map's workers).
//
// Stand-ins (`stand_ins`): an element skipped under the skip policy keeps its place in
// the batch, filled with a copy (pixels and label) of the last good sample before it in
// input order, or, before the iterator's first good sample, of that first good sample
// (until then the stand-in is pending and its batch waits). Its mark in Batch::stand_ins
// is 1. So the batches have the sizes they would have had with no bad element.
class MapAndBatchIterator : public Iterator<Batch> {
 public:
  MapAndBatchIterator(const DatasetPtr<Record>& input, const SampleWriter& writer,
                      int parallelism, const std::string& name, size_t batch_size,
                      bool drop_remainder, bool stand_ins, const IteratorContext& ctx)
      : ctx_(ctx),
        stats_(ctx.RegisterStats("batch")),
        slots_(std::make_shared<BatchSlots>(batch_size, writer.sample_bytes, SlotsPool(), stand_ins)),
        batch_size_(batch_size),
        sample_bytes_(writer.sample_bytes),
        drop_remainder_(drop_remainder),
        stand_ins_(stand_ins) {
    // The map writes through this iterator's slots, so it is made per iterator.
    MapFunction<Record, PlacedSample> place = [writer, slots = slots_](Record&& record,
                                                                      const MapContext& c) {
      uint8_t* out = slots->Claim(c.index);
      try {
        return PlacedSample{c.index, writer.write(std::move(record), c, out), writer.sample_bytes};
      } catch (...) {
        slots->Fail(c.index);
        throw;
      }
    };
    auto map = std::make_shared<internal::MapDataset<Record, PlacedSample>>(
        input, std::move(place), parallelism, name, /*in_order=*/true);
    map_ = MakeInputIterator<PlacedSample>(map, ctx);
    stats_->buffer_capacity = static_cast<int64_t>(batch_size_);
    labels_.reserve(batch_size_);
    marks_.reserve(batch_size_);
  }

  std::optional<Batch> Next() override {
    if (input_ended_) return std::nullopt;
    while (true) {
      // 1. A whole batch gathered earlier (stand-ins waited for a good sample).
      if (labels_.size() >= batch_size_ && pending_ == 0) return TakeBatch(batch_size_);
      // 2. The next sample in input order; the elements it passed over were skipped.
      auto start = std::chrono::steady_clock::now();
      std::optional<PlacedSample> sample = map_->Next();
      StageStats::AddSince(stats_->input_wait_ns, start);
      if (!sample) return EndOfInput();
      start = std::chrono::steady_clock::now();
      for (uint64_t seq = slots_->next_seq(); seq < sample->seq; ++seq) {
        if (stand_ins_) {
          PlaceStandIn(seq);
        } else {
          slots_->Skip(seq);
        }
      }
      // 3. Place it; a full batch goes out.
      PlaceGood(*sample);
      std::optional<Batch> batch;
      if (labels_.size() >= batch_size_) batch = TakeBatch(batch_size_);
      StageStats::AddSince(stats_->busy_ns, start);
      if (batch) return batch;
    }
  }

  void Save(IteratorState& state) override {
    const uint64_t placed = slots_->placed();
    StateEncoder partial;
    partial.PutInt(static_cast<int64_t>(labels_.size()));
    for (int64_t label : labels_) partial.PutInt(label);
    partial.PutBytes(slots_->CopyPlaces(placed - labels_.size(), labels_.size()));
    state.PutInt(ctx_.Key("placed"), static_cast<int64_t>(placed));
    state.PutInt(ctx_.Key("skipped"), static_cast<int64_t>(slots_->failures()));
    state.PutInt(ctx_.Key("input_ended"), input_ended_ ? 1 : 0);
    state.PutBytes(ctx_.Key("partial"), partial.Finish());
    if (stand_ins_) {
      StateEncoder s;
      s.PutBytes(std::string(marks_.begin(), marks_.end()));
      s.PutInt(last_good_ ? 1 : 0);
      if (last_good_) {
        s.PutInt(last_good_->label);
        s.PutBytes(std::string(reinterpret_cast<const char*>(last_good_->pixels.data()), sample_bytes_));
      }
      state.PutBytes(ctx_.Key("stand_ins"), s.Finish());
    }
    map_->Save(state);
  }

  void Restore(const IteratorState& state) override {
    const std::string key = ctx_.Key("partial");
    StateDecoder d(state.GetBytes(key), "iterator state " + key);
    const int64_t count = d.GetInt();
    if (count < 0 || (!stand_ins_ && static_cast<uint64_t>(count) >= batch_size_)) {
      throw Error("iterator state " + key + ": " + std::to_string(count) +
                  " samples for batches of " + std::to_string(batch_size_));
    }
    std::vector<int64_t> labels;
    for (int64_t i = 0; i < count; ++i) {
      if (d.done()) throw Error("iterator state " + key + ": truncated labels");
      labels.push_back(d.GetInt());
    }
    const std::string pixels = d.GetBytes();
    if (!d.done() || pixels.size() != static_cast<size_t>(count) * sample_bytes_) {
      throw Error("iterator state " + key + ": " + std::to_string(pixels.size()) +
                  " pixel bytes for " + std::to_string(count) + " samples of " +
                  std::to_string(sample_bytes_));
    }
    const int64_t placed = state.GetInt(ctx_.Key("placed"));
    const int64_t skipped = state.GetInt(ctx_.Key("skipped"));
    input_ended_ = state.GetInt(ctx_.Key("input_ended")) != 0;
    // Until the end, the samples gathered are those placed since the last batch out.
    if (placed < count || skipped < 0 ||
        (!input_ended_ && static_cast<uint64_t>(placed - count) % batch_size_ != 0)) {
      throw Error("iterator state " + ctx_.Key("placed") + ": " + std::to_string(placed) +
                  " samples placed do not leave " + std::to_string(count) + " in the partial batch");
    }
    RestoreStandIns(state, static_cast<size_t>(count));
    labels_ = std::move(labels);
    slots_->Reset(static_cast<uint64_t>(placed), static_cast<uint64_t>(skipped), pixels);
    stats_->buffer_fill = count;
    map_->Restore(state);
  }

 private:
  // A sample's pixels and label, kept apart from the batches (the last good one).
  struct KeptSample {
    PooledBuffer pixels;
    int64_t label = -1;
  };
  // marks_ values: a good sample, a stand-in filled, a stand-in waiting for a good one.
  static constexpr uint8_t kGood = 0, kStandIn = 1, kPending = 2;

  // The place of the first sample gathered (the next batch's first).
  uint64_t FirstGathered() const { return slots_->placed() - labels_.size(); }

  // Restores marks_, pending_ and last_good_ (none in states saved without stand-ins).
  void RestoreStandIns(const IteratorState& state, size_t count) {
    const std::string key = ctx_.Key("stand_ins");
    marks_.assign(count, kGood);
    pending_ = 0;
    last_good_.reset();
    last_good_place_.reset();
    if (!stand_ins_ || !state.Has(key)) return;
    StateDecoder d(state.GetBytes(key), "iterator state " + key);
    const std::string marks = d.GetBytes();
    if (marks.size() != count) throw Error("iterator state " + key + ": marks do not match the samples");
    marks_.assign(marks.begin(), marks.end());
    for (uint8_t m : marks_) {
      if (m > kPending) throw Error("iterator state " + key + ": bad mark");
      pending_ += m == kPending;
    }
    if (d.GetInt() != 0) {
      KeptSample kept;
      kept.label = d.GetInt();
      const std::string pixels = d.GetBytes();
      if (pixels.size() != sample_bytes_) throw Error("iterator state " + key + ": bad sample size");
      kept.pixels = SlotsPool()->Get(sample_bytes_);
      std::memcpy(kept.pixels.data(), pixels.data(), sample_bytes_);
      last_good_ = std::move(kept);
    }
    if (!d.done()) throw Error("iterator state " + key + ": trailing bytes");
    const uint64_t first = static_cast<uint64_t>(state.GetInt(ctx_.Key("placed"))) - count;
    for (size_t i = count; i-- > 0;) {
      if (marks_[i] == kGood) {
        last_good_place_ = first + i;
        break;
      }
    }
  }

  // Where the batch buffers and the last good sample's copy come from.
  std::shared_ptr<BufferPool> SlotsPool() const { return ctx_.pool ? ctx_.pool : BufferPool::Default(); }

  // A good sample takes the next place; stand-ins waiting for one become its copies.
  void PlaceGood(const PlacedSample& sample) {
    const uint64_t place = slots_->Place(sample.seq);
    labels_.push_back(sample.label);
    marks_.push_back(kGood);
    last_good_place_ = place;
    if (pending_ > 0) {
      const uint64_t first = FirstGathered();
      for (size_t i = 0; i < marks_.size(); ++i) {
        if (marks_[i] != kPending) continue;
        slots_->CopySample(place, first + i);
        labels_[i] = sample.label;
        marks_[i] = kStandIn;
      }
      pending_ = 0;
    }
    stats_->buffer_fill = static_cast<int64_t>(labels_.size());
  }

  // Element `seq` failed: its place gets a copy of the last good sample, or waits for
  // the first good one.
  void PlaceStandIn(uint64_t seq) {
    const uint64_t place = slots_->PlaceStandIn(seq);
    stats_->stand_ins++;
    if (last_good_place_ && *last_good_place_ >= place - labels_.size()) {
      slots_->CopySample(*last_good_place_, place);
      labels_.push_back(labels_[*last_good_place_ - (place - labels_.size())]);
      marks_.push_back(kStandIn);
    } else if (last_good_) {
      slots_->WriteSample(place, last_good_->pixels.data());
      labels_.push_back(last_good_->label);
      marks_.push_back(kStandIn);
    } else {
      labels_.push_back(-1);
      marks_.push_back(kPending);
      ++pending_;
    }
    stats_->buffer_fill = static_cast<int64_t>(labels_.size());
  }

  // The first `count` samples gathered as a batch; the rest stay for the next.
  Batch TakeBatch(size_t count) {
    const uint64_t first = FirstGathered();
    const uint64_t b = first / batch_size_;
    // The last good sample leaves with this batch: keep a copy for later stand-ins.
    if (stand_ins_ && last_good_place_ && *last_good_place_ >= first && *last_good_place_ < first + count) {
      if (!last_good_) last_good_.emplace(KeptSample{SlotsPool()->Get(sample_bytes_), -1});
      slots_->ReadSample(*last_good_place_, last_good_->pixels.data());
      last_good_->label = labels_[*last_good_place_ - first];
    }
    Batch batch;
    batch.size = count;
    batch.sample_bytes = sample_bytes_;
    batch.data = slots_->TakeBatch(b, batch.size);
    batch.labels.assign(labels_.begin(), labels_.begin() + static_cast<ptrdiff_t>(count));
    if (std::any_of(marks_.begin(), marks_.begin() + static_cast<ptrdiff_t>(count),
                    [](uint8_t m) { return m != kGood; })) {
      batch.stand_ins.assign(marks_.begin(), marks_.begin() + static_cast<ptrdiff_t>(count));
    }
    labels_.erase(labels_.begin(), labels_.begin() + static_cast<ptrdiff_t>(count));
    marks_.erase(marks_.begin(), marks_.begin() + static_cast<ptrdiff_t>(count));
    stats_->buffer_fill = static_cast<int64_t>(labels_.size());
    stats_->elements++;
    stats_->bytes += ElementBytes(batch);
    return batch;
  }

  // The partial batch, unless drop_remainder; then the end. Stand-ins still waiting
  // mean no element of the pass was good: they are dropped, and the pipeline's rule
  // for a pass of only bad elements applies (bad_element.h).
  std::optional<Batch> EndOfInput() {
    // The elements after the last good one failed: their stand-ins too.
    if (stand_ins_) {
      for (uint64_t seq : slots_->FailedUnplaced()) {
        if (seq == slots_->next_seq()) PlaceStandIn(seq);
      }
      if (labels_.size() >= batch_size_ && pending_ == 0) return TakeBatch(batch_size_);
    }
    input_ended_ = true;
    if (labels_.empty() || pending_ > 0 || drop_remainder_) {
      labels_.clear();
      marks_.clear();
      pending_ = 0;
      stats_->buffer_fill = 0;
      return std::nullopt;
    }
    return TakeBatch(labels_.size());
  }

  const IteratorContext ctx_;
  StageStats* stats_;
  const std::shared_ptr<BatchSlots> slots_;
  const size_t batch_size_;
  const size_t sample_bytes_;
  const bool drop_remainder_;
  const bool stand_ins_;
  std::unique_ptr<Iterator<PlacedSample>> map_;
  // The samples placed since the last batch went out (more than a batch only while
  // stand-ins wait for a good sample): their labels and marks.
  std::vector<int64_t> labels_;
  std::vector<uint8_t> marks_;
  size_t pending_ = 0;                       // marks_ that are kPending
  std::optional<uint64_t> last_good_place_;  // the last good sample's place
  std::optional<KeptSample> last_good_;      // its copy, once its batch went out
  bool input_ended_ = false;
};

class MapAndBatchDataset : public Dataset<Batch> {
 public:
  MapAndBatchDataset(DatasetPtr<Record> input, SampleWriter writer, int parallelism,
                     std::string name, size_t batch_size, bool drop_remainder, bool stand_ins)
      : input_(std::move(input)),
        writer_(std::move(writer)),
        parallelism_(parallelism),
        name_(std::move(name)),
        batch_size_(batch_size),
        drop_remainder_(drop_remainder),
        stand_ins_(stand_ins) {}

  std::unique_ptr<Iterator<Batch>> MakeIterator(const IteratorContext& ctx) const override {
    return std::make_unique<MapAndBatchIterator>(input_, writer_, parallelism_, name_,
                                                 batch_size_, drop_remainder_, stand_ins_, ctx);
  }
  std::string name() const override { return "batch"; }

 private:
  DatasetPtr<Record> input_;
  SampleWriter writer_;
  int parallelism_;
  std::string name_;
  size_t batch_size_;
  bool drop_remainder_;
  bool stand_ins_;
};

}  // namespace

MapFunction<Record, Sample> SampleFunctionOf(SampleWriter writer) {
  return [writer = std::move(writer)](Record&& record, const MapContext& c) {
    Sample sample;
    sample.pixels = c.pool->Get(writer.sample_bytes);
    sample.source = record.source;
    sample.offset = record.offset;
    sample.label = writer.write(std::move(record), c, sample.pixels.data());
    return sample;
  };
}

DatasetPtr<Batch> MapAndBatch(DatasetPtr<Record> input, SampleWriter writer, int parallelism,
                              std::string name, size_t batch_size, bool drop_remainder,
                              bool stand_ins) {
  if (batch_size == 0) throw Error("map_and_batch: batch_size must be at least 1");
  if (parallelism == 0 || parallelism < kAutotune) {
    throw Error("map_and_batch: parallelism must be >= 1 or kAutotune");
  }
  if (!writer.write) throw Error("map_and_batch: no sample writer");
  return std::make_shared<MapAndBatchDataset>(std::move(input), std::move(writer), parallelism,
                                              std::move(name), batch_size, drop_remainder, stand_ins);
}

}  // namespace imgpipe::pipeline
