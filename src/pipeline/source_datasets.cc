#include "pipeline/source_datasets.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <numeric>

#include "io/storage.h"
#include "pipeline/autotune.h"
#include "pipeline/input_list.h"
#include "pipeline/shard_dataset.h"
#include "pipeline/shard_rule.h"
#include "record/index.h"
#include "record/tfrecord_format.h"
#include "record/tfrecord_reader.h"
#include "util/error.h"
#include "util/file.h"
#include "util/logging.h"
#include "util/random.h"

namespace imgpipe::pipeline {
namespace {

using Clock = std::chrono::steady_clock;
using tfrecord::kFooterSize;
using tfrecord::kHeaderSize;

// ---------------------------------------------------------------------------------
// Helpers shared by the sources.


// The order in which `n` items are visited in epoch `epoch`: 0..n-1, or with `shuffle` a
// permutation drawn from DeriveSeed(seed, epoch) (Fisher-Yates with SplitMix64).
std::vector<size_t> EpochOrder(size_t n, bool shuffle, uint64_t seed, uint64_t epoch) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  if (shuffle) {
    SplitMix64 rng(DeriveSeed(seed, epoch));
    for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.Below(i)]);
  }
  return order;
}

// Position state shared by the list sources: "position" under the stage's prefix.
size_t RestorePosition(const IteratorState& state, const IteratorContext& ctx, size_t size) {
  int64_t position = state.GetInt(ctx.Key("position"));
  if (position < 0 || static_cast<uint64_t>(position) > size) {
    throw Error("iterator state " + ctx.Key("position") + " = " + std::to_string(position) +
                " is outside [0, " + std::to_string(size) + "]");
  }
  return static_cast<size_t>(position);
}

// ---------------------------------------------------------------------------------
// ListFiles

class ListFilesDataset : public Dataset<std::string> {
 public:
  ListFilesDataset(std::vector<std::string> files, bool shuffle, std::optional<uint64_t> seed)
      : files_(std::make_shared<const std::vector<std::string>>(std::move(files))),
        shuffle_(shuffle),
        seed_(seed) {}

  std::unique_ptr<Iterator<std::string>> MakeIterator(const IteratorContext& ctx) const override {
    return std::make_unique<ListFilesIterator>(*this, ctx);
  }
  std::string name() const override { return "list_files"; }

 private:
  class ListFilesIterator : public Iterator<std::string> {
   public:
    ListFilesIterator(const ListFilesDataset& dataset, const IteratorContext& ctx)
        : ctx_(ctx),
          files_(dataset.files_),
          order_(EpochOrder(files_->size(), dataset.shuffle_,
                            dataset.seed_.value_or(ctx.options->seed), ctx.epoch)),
          stats_(ctx.RegisterStats(dataset.name())) {}

    std::optional<std::string> Next() override {
      if (position_ >= order_.size()) return std::nullopt;
      const std::string& file = (*files_)[order_[position_++]];
      stats_->elements += 1;
      stats_->bytes += file.size();
      return file;
    }
    void Save(IteratorState& state) override {
      state.PutInt(ctx_.Key("position"), static_cast<int64_t>(position_));
    }
    void Restore(const IteratorState& state) override {
      position_ = RestorePosition(state, ctx_, order_.size());
    }

   private:
    const IteratorContext ctx_;
    const std::shared_ptr<const std::vector<std::string>> files_;  // shared with the dataset
    const std::vector<size_t> order_;                              // this epoch's order of files_
    StageStats* stats_;
    size_t position_ = 0;
  };

  const std::shared_ptr<const std::vector<std::string>> files_;
  const bool shuffle_;
  const std::optional<uint64_t> seed_;
};

// The pipeline's read-ahead knob: pieces in flight per file read from a URL (1 to 4,
// from 2), which the autotuner doubles while the consumer waits and its RAM budget
// allows; null without autotuning (the readers then keep up to 4 in flight).
Knob* ReadAheadKnob(const IteratorContext& ctx) {
  if (!ctx.autotuner || !ctx.options->autotune) return nullptr;
  return ctx.autotuner->Shared(Knob::Kind::kBuffer, "read_ahead", 1, kMaxPiecesHeld - 1, 2);
}

// A reader's part of that knob: its piece size counted in the knob's bytes (the RAM
// budget's view of the read-ahead) while the reader lives.
class ReadAheadShare {
 public:
  ReadAheadShare(Knob* knob, uint64_t piece_bytes) : knob_(piece_bytes > 0 ? knob : nullptr), bytes_(piece_bytes) {
    if (knob_) knob_->element_bytes += bytes_;
  }
  ~ReadAheadShare() {
    if (knob_) knob_->element_bytes -= bytes_;
  }
  ReadAheadShare(const ReadAheadShare&) = delete;
  ReadAheadShare& operator=(const ReadAheadShare&) = delete;
  // The limit to give the reader: the knob's value, or none.
  const PiecesAheadLimit* limit() const { return knob_ ? &knob_->value : nullptr; }

 private:
  Knob* const knob_;
  const uint64_t bytes_;
};

// ---------------------------------------------------------------------------------
// TfRecordFiles

// The records of one TFRecord file from a byte offset on (the end of the last record
// a previous iterator returned). Uncompressed files are read from that offset
// directly; compressed ones (and an uncompressed one with a corrupt stretch after
// the offset, under kSkip) are read from the start by a TfRecordReader that passes
// over the records before the offset, so that skipping and resynchronising happen
// exactly as in an uninterrupted read. A URL is opened once for both the compression
// check and the reader (each open costs a round trip), and read ahead in pieces as
// `read_ahead` (the pipeline's knob, or null) allows.
class FileRecords {
 public:
  FileRecords(std::string path, uint64_t start_offset, ErrorPolicy policy, Knob* read_ahead)
      : path_(std::move(path)),
        policy_(policy),
        source_(IsUrl(path_) ? OpenByteSource(path_, start_offset == 0 ? ReadPattern::kFrontToBack
                                                                        : ReadPattern::kRandom)
                             : nullptr),
        read_ahead_(read_ahead, source_ ? source_->read_ahead_bytes() : 0),
        compression_(source_ ? DetectCompression(*source_) : DetectCompression(path_)),
        next_offset_(start_offset) {
    if (compression_ == Compression::kNone && start_offset > 0) {
      direct_ = source_ ? OpenFrom(std::move(source_), start_offset) : std::make_unique<TfRecordRandomReader>(path_);
    } else {
      OpenReader(start_offset);
    }
  }

  // The next good record into *record (data, offset and checked data CRC); false at
  // the end of the file.
  bool Next(Record* record) {
    if (direct_) {
      if (next_offset_ >= direct_->size()) return false;
      try {
        uint64_t end = 0;
        uint32_t crc = 0;
        record->data = direct_->ReadAt(next_offset_, &end, &crc);
        record->data_crc = crc;
        record->offset = next_offset_;
        next_offset_ = end;
        return true;
      } catch (const DataError&) {
        if (policy_ == ErrorPolicy::kFail) throw;
        direct_.reset();  // let the reader skip the corrupt stretch as it would have
        OpenReader(next_offset_);
      }
    }
    while (reader_->Next(&record->data)) {
      if (reader_->record_offset() < skip_until_) continue;  // returned before the cut
      record->offset = reader_->record_offset();
      record->data_crc = reader_->record_crc();
      next_offset_ = record->offset + kHeaderSize + record->data.size() + kFooterSize;
      return true;
    }
    return false;
  }

  // Corrupt stretches (at or after the start offset) met since the last call, each
  // described as "PATH: offset N: REASON" (logged by the reader already).
  std::vector<std::string> TakeNewErrors() {
    std::vector<std::string> out;
    if (!reader_) return out;
    const std::vector<CorruptRecord>& errors = reader_->stats().errors;
    for (; errors_reported_ < errors.size(); ++errors_reported_) {
      const CorruptRecord& error = errors[errors_reported_];
      if (error.offset >= skip_until_) {
        out.push_back(path_ + ": offset " + std::to_string(error.offset) + ": " + error.reason);
      }
    }
    return out;
  }

  const std::string& path() const { return path_; }
  Compression compression() const { return compression_; }
  // Where reading goes on: the end of the last record returned (or the start offset).
  uint64_t next_offset() const { return next_offset_; }

 private:
  // A reader of `source`'s records from `offset` on: a source read over a network is
  // fetched ahead in pieces from there to its end.
  std::unique_ptr<TfRecordRandomReader> OpenFrom(std::unique_ptr<ByteSource> source, uint64_t offset) const {
    const uint64_t piece_bytes = source->read_ahead_bytes();
    if (piece_bytes == 0 || offset >= source->size()) return std::make_unique<TfRecordRandomReader>(std::move(source));
    std::vector<ByteRange> pieces = SplitIntoPieces({offset, source->size() - offset}, piece_bytes);
    return std::make_unique<TfRecordRandomReader>(ReadRangesAhead(std::move(source), std::move(pieces), read_ahead_.limit()),
                                                  /*window_bytes=*/0);
  }

  void OpenReader(uint64_t skip_until) {
    TfRecordReaderOptions options;
    options.compression = compression_;
    options.policy = policy_;
    options.read_ahead_limit = read_ahead_.limit();
    reader_ = source_ ? std::make_unique<TfRecordReader>(std::move(source_), options)
                      : std::make_unique<TfRecordReader>(path_, options);
    skip_until_ = skip_until;
    errors_reported_ = 0;
  }

  const std::string path_;
  const ErrorPolicy policy_;
  std::unique_ptr<ByteSource> source_;  // a URL's, until a reader takes it
  const ReadAheadShare read_ahead_;
  const Compression compression_;
  uint64_t next_offset_;
  std::unique_ptr<TfRecordRandomReader> direct_;
  std::unique_ptr<TfRecordReader> reader_;
  uint64_t skip_until_ = 0;     // records of reader_ before this offset are passed over
  size_t errors_reported_ = 0;  // reader_->stats().errors already looked at
};

class TfRecordFilesDataset : public Dataset<Record> {
 public:
  explicit TfRecordFilesDataset(DatasetPtr<std::string> files) : files_(std::move(files)) {}

  std::unique_ptr<Iterator<Record>> MakeIterator(const IteratorContext& ctx) const override {
    return std::make_unique<TfRecordFilesIterator>(*this, ctx);
  }
  std::string name() const override { return "tfrecord"; }

 private:
  class TfRecordFilesIterator : public Iterator<Record> {
   public:
    TfRecordFilesIterator(const TfRecordFilesDataset& dataset, const IteratorContext& ctx)
        : ctx_(ctx),
          files_(MakeInputIterator(dataset.files_, ctx)),
          stats_(ctx.RegisterStats(dataset.name())),
          bad_(ctx.MakeBadElementGuard(stats_)) {}

    std::optional<Record> Next() override {
      while (true) {
        // 1. The current file, if any.
        if (current_) {
          auto start = Clock::now();
          Record record;
          bool got = false;
          try {
            got = current_->Next(&record);
          } catch (...) {
            CountCorruptStretches();
            StageStats::AddSince(stats_->busy_ns, start);
            throw;
          }
          CountCorruptStretches();
          StageStats::AddSince(stats_->busy_ns, start);
          if (got) {
            bad_.Good();
            record.source = current_->path();
            record.origin = current_->compression() == Compression::kNone ? RecordOrigin::kTfRecord
                                                                          : RecordOrigin::kValue;
            stats_->elements += 1;
            stats_->bytes += record.data.size();
            return record;
          }
          current_.reset();
        }
        // 2. The next file.
        auto start = Clock::now();
        std::optional<std::string> file = files_->Next();
        StageStats::AddSince(stats_->input_wait_ns, start);
        if (!file) return std::nullopt;
        current_ = std::make_unique<FileRecords>(*file, 0, ctx_.options->error_policy, ReadAheadKnobFor(*file));
      }
    }

    void Save(IteratorState& state) override {
      state.PutInt(ctx_.Key("open"), current_ ? 1 : 0);
      if (current_) {
        state.PutBytes(ctx_.Key("file"), current_->path());
        state.PutInt(ctx_.Key("offset"), static_cast<int64_t>(current_->next_offset()));
      }
      files_->Save(state);
    }

    void Restore(const IteratorState& state) override {
      current_.reset();
      if (state.GetInt(ctx_.Key("open")) != 0) {
        int64_t offset = state.GetInt(ctx_.Key("offset"));
        if (offset < 0) throw Error("iterator state " + ctx_.Key("offset") + " is negative");
        const std::string file = state.GetBytes(ctx_.Key("file"));
        current_ = std::make_unique<FileRecords>(file, static_cast<uint64_t>(offset), ctx_.options->error_policy,
                                                 ReadAheadKnobFor(file));
      }
      files_->Restore(state);
    }

   private:
    // The pipeline's read-ahead knob for a URL, null for a local path.
    Knob* ReadAheadKnobFor(const std::string& file) const { return IsUrl(file) ? ReadAheadKnob(ctx_) : nullptr; }

    // Counts the corrupt stretches the reader skipped since the last call.
    void CountCorruptStretches() {
      for (const std::string& reason : current_->TakeNewErrors()) bad_.Skipped(reason);
    }

    const IteratorContext ctx_;
    std::unique_ptr<Iterator<std::string>> files_;
    StageStats* stats_;
    BadElementGuard bad_;
    std::unique_ptr<FileRecords> current_;  // the file being read, if any
  };

  const DatasetPtr<std::string> files_;
};

// ---------------------------------------------------------------------------------
// TfRecordRecordShard

// The part of one file that a record-level shard reads.
struct ShardFile {
  std::string path;
  uint64_t first = 0;               // shard position of entries[0]
  std::vector<IndexEntry> entries;  // the file's records in the shard's range
};

class RecordShardDataset : public Dataset<Record> {
 public:
  RecordShardDataset(std::vector<ShardFile> files, uint64_t size)
      : files_(std::make_shared<const std::vector<ShardFile>>(std::move(files))), size_(size) {}

  std::unique_ptr<Iterator<Record>> MakeIterator(const IteratorContext& ctx) const override {
    return std::make_unique<RecordShardIterator>(*this, ctx);
  }
  std::string name() const override { return "tfrecord_shard"; }

 private:
  class RecordShardIterator : public Iterator<Record> {
   public:
    RecordShardIterator(const RecordShardDataset& dataset, const IteratorContext& ctx)
        : ctx_(ctx),
          files_(dataset.files_),
          size_(dataset.size_),
          stats_(ctx.RegisterStats(dataset.name())),
          bad_(ctx.MakeBadElementGuard(stats_)) {}

    std::optional<Record> Next() override {
      while (position_ < size_) {
        auto start = Clock::now();
        // 1. The file holding this position (opened once, read forward).
        const uint64_t position = position_++;
        while (position >= (*files_)[file_].first + (*files_)[file_].entries.size()) ++file_;
        const ShardFile& shard_file = (*files_)[file_];
        if (!reader_ || reader_->path() != shard_file.path) Open(shard_file, position - shard_file.first);
        const IndexEntry& entry = shard_file.entries[position - shard_file.first];
        // 2. The record, checked against its index entry.
        Record record;
        try {
          uint64_t end = 0;
          uint32_t crc = 0;
          record.data = reader_->ReadAt(entry.offset, &end, &crc);
          record.data_crc = crc;
          if (end - entry.offset != entry.size) {
            throw DataError(shard_file.path, entry.offset,
                            "record size " + std::to_string(end - entry.offset) +
                                " differs from the index entry's " + std::to_string(entry.size) +
                                " (stale index " + IndexPathFor(shard_file.path) + "?)");
          }
        } catch (const DataError& e) {
          StageStats::AddSince(stats_->busy_ns, start);
          bad_.SkipOrRethrow(e);
          continue;
        }
        bad_.Good();
        record.source = shard_file.path;
        record.offset = entry.offset;
        record.origin = RecordOrigin::kTfRecord;
        StageStats::AddSince(stats_->busy_ns, start);
        stats_->elements += 1;
        stats_->bytes += record.data.size();
        return record;
      }
      return std::nullopt;
    }

    void Save(IteratorState& state) override {
      state.PutInt(ctx_.Key("position"), static_cast<int64_t>(position_));
    }
    void Restore(const IteratorState& state) override {
      position_ = RestorePosition(state, ctx_, size_);
      file_ = 0;
      reader_.reset();
      read_ahead_.reset();
    }

   private:
    // Opens `file` to read its entries from `first` on. A URL's records are fetched ahead
    // in ranged reads cut at record boundaries (the index's entries), up to a piece each.
    void Open(const ShardFile& file, size_t first) {
      reader_.reset();
      read_ahead_.reset();
      std::unique_ptr<ByteSource> source = OpenByteSource(file.path);
      const uint64_t piece_bytes = source->read_ahead_bytes();
      if (piece_bytes == 0) {
        reader_ = std::make_unique<TfRecordRandomReader>(std::move(source));
        return;
      }
      std::vector<ByteRange> records;
      for (size_t i = first; i < file.entries.size(); ++i) records.push_back({file.entries[i].offset, file.entries[i].size});
      read_ahead_ = std::make_unique<ReadAheadShare>(ReadAheadKnob(ctx_), piece_bytes);
      reader_ = std::make_unique<TfRecordRandomReader>(
          ReadRangesAhead(std::move(source), PiecesAlong(records, piece_bytes), read_ahead_->limit()),
          /*window_bytes=*/0);
    }

    const IteratorContext ctx_;
    const std::shared_ptr<const std::vector<ShardFile>> files_;  // shared with the dataset
    const uint64_t size_;
    StageStats* stats_;
    uint64_t position_ = 0;  // in [0, size_)
    size_t file_ = 0;        // files_ index at or before position_'s file
    std::unique_ptr<TfRecordRandomReader> reader_;
    std::unique_ptr<ReadAheadShare> read_ahead_;  // reader_'s share, for a URL
    BadElementGuard bad_;
  };

  const std::shared_ptr<const std::vector<ShardFile>> files_;
  const uint64_t size_;
};

// ---------------------------------------------------------------------------------
// ImageFiles

class ImageFilesDataset : public Dataset<Record> {
 public:
  ImageFilesDataset(InputList images, bool shuffle, std::optional<uint64_t> seed)
      : images_(std::make_shared<const InputList>(std::move(images))),
        shuffle_(shuffle),
        seed_(seed) {}

  std::unique_ptr<Iterator<Record>> MakeIterator(const IteratorContext& ctx) const override {
    return std::make_unique<ImageFilesIterator>(*this, ctx);
  }
  std::string name() const override { return "image_files"; }

 private:
  class ImageFilesIterator : public Iterator<Record> {
   public:
    ImageFilesIterator(const ImageFilesDataset& dataset, const IteratorContext& ctx)
        : ctx_(ctx),
          images_(dataset.images_),
          order_(EpochOrder(images_->size(), dataset.shuffle_,
                            dataset.seed_.value_or(ctx.options->seed), ctx.epoch)),
          stats_(ctx.RegisterStats(dataset.name())),
          bad_(ctx.MakeBadElementGuard(stats_)) {}

    std::optional<Record> Next() override {
      while (position_ < order_.size()) {
        const InputImage image = images_->image(order_[position_++]);
        auto start = Clock::now();
        Record record;
        try {
          record.data = ReadFile(image.path);
        } catch (const Error& e) {
          StageStats::AddSince(stats_->busy_ns, start);
          bad_.SkipOrRethrow(e, image.path);
          continue;
        }
        bad_.Good();
        StageStats::AddSince(stats_->busy_ns, start);
        record.source = image.path;
        record.label = image.label;
        record.origin = RecordOrigin::kFile;
        stats_->elements += 1;
        stats_->bytes += record.data.size();
        return record;
      }
      return std::nullopt;
    }
    void Save(IteratorState& state) override {
      state.PutInt(ctx_.Key("position"), static_cast<int64_t>(position_));
    }
    void Restore(const IteratorState& state) override {
      position_ = RestorePosition(state, ctx_, order_.size());
    }

   private:
    const IteratorContext ctx_;
    const std::shared_ptr<const InputList> images_;  // shared with the dataset
    const std::vector<size_t> order_;
    StageStats* stats_;
    BadElementGuard bad_;
    size_t position_ = 0;
  };

  const std::shared_ptr<const InputList> images_;
  const bool shuffle_;
  const std::optional<uint64_t> seed_;
};

}  // namespace

namespace {

// The URLs `pattern` (after brace expansion) names: itself when it has no *, ? or [..],
// else the names of its folder's listing that its last part matches (fnmatch(3)).
void MatchUrls(const std::string& pattern, std::vector<std::string>* urls) {
  if (pattern.find_first_of("*?[") == std::string::npos) {
    urls->push_back(pattern);
    return;
  }
  const std::string dir = DirName(pattern), name_pattern = BaseName(pattern);
  if (dir.find_first_of("*?[") != std::string::npos) {
    throw Error("list_files: " + pattern + ": a URL may have *, ? or [..] in its last part only");
  }
  for (const std::string& name : ListStorageFolder(dir)) {
    if (fnmatch(name_pattern.c_str(), name.c_str(), 0) == 0) urls->push_back(JoinPath(dir, name));
  }
}

}  // namespace

std::vector<std::string> MatchFiles(const std::vector<std::string>& patterns) {
  std::vector<std::string> files;
  std::vector<std::string> expanded;
  for (const std::string& pattern : patterns) {
    for (std::string& one : ExpandBraces(pattern)) expanded.push_back(std::move(one));
  }
  for (const std::string& pattern : expanded) {
    if (IsUrl(pattern)) {
      MatchUrls(pattern, &files);
      continue;
    }
    glob_t matches{};
    // GLOB_MARK appends '/' to folders, which are left out.
    int rc = ::glob(pattern.c_str(), GLOB_MARK, nullptr, &matches);
    if (rc == 0) {
      for (size_t i = 0; i < matches.gl_pathc; ++i) {
        std::string path = matches.gl_pathv[i];
        if (!path.empty() && path.back() != '/') files.push_back(std::move(path));
      }
    }
    ::globfree(&matches);
    if (rc == GLOB_NOSPACE) throw Error("list_files: out of memory expanding '" + pattern + "'");
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  if (files.empty()) {
    std::string names;
    for (const std::string& p : patterns) names += (names.empty() ? "'" : ", '") + p + "'";
    throw Error("list_files: no files match " + (names.empty() ? "(no patterns)" : names));
  }
  return files;
}

DatasetPtr<std::string> ListFiles(std::vector<std::string> patterns, bool shuffle,
                                  std::optional<uint64_t> seed) {
  return std::make_shared<ListFilesDataset>(MatchFiles(patterns), shuffle, seed);
}

DatasetPtr<Record> TfRecordFiles(DatasetPtr<std::string> files) {
  if (!files) throw Error("tfrecord: no input dataset of file names");
  return std::make_shared<TfRecordFilesDataset>(std::move(files));
}

DatasetPtr<Record> TfRecordRecordShard(std::vector<std::string> files, int num_shards, int index) {
  CheckShardIndex("tfrecord_shard", num_shards, index);
  // 1. Every file's index: record counts, and the entries that fall in this shard.
  std::vector<std::vector<IndexEntry>> indexes;
  uint64_t total = 0;
  for (const std::string& file : files) {
    if (const Compression compression = DetectCompression(file); compression != Compression::kNone) {
      throw Error("tfrecord_shard: " + file + " is " + CompressionName(compression) +
                  "-compressed; record-level (DATA) sharding needs uncompressed TFRecord files");
    }
    std::string index_path = IndexPathFor(file);
    indexes.push_back(StorageExists(index_path) ? ReadIndexFile(index_path) : BuildIndex(file));
    total += indexes.back().size();
  }
  // 2. The shard's range [begin, end) of the concatenation.
  const SampleRange range = ContiguousShardRange(total, num_shards, index);
  const uint64_t begin = range.begin, end = range.end;
  // 3. The files that overlap it, with their entries in it.
  std::vector<ShardFile> shard_files;
  uint64_t file_first = 0;  // global index of the file's first record
  for (size_t f = 0; f < files.size(); ++f) {
    uint64_t file_end = file_first + indexes[f].size();
    uint64_t lo = std::max(begin, file_first), hi = std::min(end, file_end);
    if (lo < hi) {
      ShardFile sf;
      sf.path = files[f];
      sf.first = lo - begin;
      sf.entries.assign(indexes[f].begin() + static_cast<ptrdiff_t>(lo - file_first),
                        indexes[f].begin() + static_cast<ptrdiff_t>(hi - file_first));
      shard_files.push_back(std::move(sf));
    }
    file_first = file_end;
  }
  return std::make_shared<RecordShardDataset>(std::move(shard_files), end - begin);
}

DatasetPtr<Record> ShardedTfRecords(std::vector<std::string> patterns, int num_shards, int index,
                                    ShardPolicy policy) {
  CheckShardIndex("sharded_tfrecords", num_shards, index);
  std::vector<std::string> files = MatchFiles(patterns);
  if (policy == ShardPolicy::kAuto) {
    policy =
        files.size() >= static_cast<size_t>(num_shards) ? ShardPolicy::kFile : ShardPolicy::kData;
  }
  if (policy == ShardPolicy::kData) return TfRecordRecordShard(std::move(files), num_shards, index);
  DatasetPtr<std::string> listed =
      std::make_shared<ListFilesDataset>(std::move(files), false, std::nullopt);
  return TfRecordFiles(Shard(std::move(listed), num_shards, index));
}

DatasetPtr<Record> ImageFiles(std::string folder, bool shuffle, std::optional<uint64_t> seed) {
  InputList list = ListImageFolder(folder);
  return std::make_shared<ImageFilesDataset>(std::move(list), shuffle, seed);
}

}  // namespace imgpipe::pipeline
