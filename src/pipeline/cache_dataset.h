// cache(path): tf.data's cache. The first complete pass over the input is kept, and
// every later iterator replays it without touching the input.
//   - In memory (no path): the elements are shared by the iterators of one Cache
//     dataset (guarded by a mutex); T must be copyable (Record, std::string).
//   - In a file (path): the elements are written with ElementCodec (records by value)
//     to a temporary name beside `path`, renamed to `path` when the pass completes;
//     later iterators, and later processes, read the file.
// A pass that does not complete is not cached. The input is always read as epoch 0, so
// the cache holds the first epoch whichever pass fills it.
//
// Cache file format: the 8 bytes "IPCACHE1", then one entry per element:
//   uint64 length (little-endian), uint32 masked CRC32C of the bytes, then the bytes:
//   the element's ElementCodec encoding in a StateEncoder.
//
// State: whether the iterator fills or replays, and its position (element count; the
// file offset when replaying a file); when filling, whether the input ended and the
// input's state. A restored fill pass that did not start at the beginning is not
// cached. Restoring an in-memory replay in a new process refills the cache from the
// input first.
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "pipeline/dataset.h"
#include "pipeline/element.h"
#include "record/crc32c.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::pipeline {
namespace internal {

inline constexpr char kCacheFileMagic[8] = {'I', 'P', 'C', 'A', 'C', 'H', 'E', '1'};
inline constexpr size_t kCacheEntryHeaderSize = 12;  // length + masked CRC

// Writes a cache file under a temporary name; Commit renames it into place. Without
// Commit the temporary file is removed.
class CacheFileWriter {
 public:
  explicit CacheFileWriter(std::string path)
      : path_(std::move(path)), temporary_path_(TemporaryName(path_)),
        file_(OpenWritableFile(temporary_path_)) {
    file_->Append(std::string_view(kCacheFileMagic, sizeof(kCacheFileMagic)));
  }
  ~CacheFileWriter() {
    if (committed_) return;
    try {
      file_->Close();
      RemoveFile(temporary_path_);
    } catch (const std::exception&) {
      // Best effort: a leftover ends with kTemporarySuffix.
    }
  }
  CacheFileWriter(const CacheFileWriter&) = delete;
  CacheFileWriter& operator=(const CacheFileWriter&) = delete;

  void Append(std::string_view entry) {
    char header[kCacheEntryHeaderSize];
    uint64_t length = entry.size();
    for (int i = 0; i < 8; ++i) header[i] = static_cast<char>(length >> (8 * i));
    uint32_t crc = crc32c::Mask(crc32c::Value(entry.data(), entry.size()));
    for (int i = 0; i < 4; ++i) header[8 + i] = static_cast<char>(crc >> (8 * i));
    file_->Append(std::string_view(header, sizeof(header)));
    file_->Append(entry);
  }

  void Commit() {
    file_->Sync();
    file_->Close();
    RenameFile(temporary_path_, path_);
    committed_ = true;
  }

 private:
  // "<path>.<pid>.<n>.tmp": unique among the writers of all processes.
  static std::string TemporaryName(const std::string& path) {
    static std::atomic<uint64_t> counter{0};
    return path + "." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1)) +
           std::string(kTemporarySuffix);
  }

  std::string path_;
  std::string temporary_path_;
  std::unique_ptr<WritableFile> file_;
  bool committed_ = false;
};

// Reads the entries of a cache file from a given offset.
class CacheFileReader {
 public:
  // `offset`: where the next entry starts (0: the start of the file).
  CacheFileReader(std::string path, uint64_t offset) : path_(std::move(path)) {
    file_ = std::fopen(path_.c_str(), "rb");
    if (file_ == nullptr) throw IoError(path_, "open", errno);
    size_ = FileSize(path_);
    char magic[sizeof(kCacheFileMagic)];
    if (std::fread(magic, 1, sizeof(magic), file_) != sizeof(magic) ||
        std::memcmp(magic, kCacheFileMagic, sizeof(magic)) != 0) {
      std::fclose(file_);
      throw DataError(path_, 0, "not a cache file (no \"IPCACHE1\" magic)");
    }
    offset_ = sizeof(kCacheFileMagic);
    if (offset > offset_) {
      if (offset > size_ || ::fseeko(file_, static_cast<off_t>(offset), SEEK_SET) != 0) {
        std::fclose(file_);
        throw DataError(path_, offset, "saved cache position is beyond the end of the file");
      }
      offset_ = offset;
    }
  }
  ~CacheFileReader() { std::fclose(file_); }
  CacheFileReader(const CacheFileReader&) = delete;
  CacheFileReader& operator=(const CacheFileReader&) = delete;

  // The next entry's bytes, or false at the end of the file.
  bool Next(std::string* entry) {
    if (offset_ == size_) return false;
    char header[kCacheEntryHeaderSize];
    if (offset_ + sizeof(header) > size_ || std::fread(header, 1, sizeof(header), file_) != sizeof(header)) {
      throw DataError(path_, offset_, "truncated cache entry header");
    }
    uint64_t length = 0;
    for (int i = 0; i < 8; ++i) length |= uint64_t{static_cast<unsigned char>(header[i])} << (8 * i);
    uint32_t masked = 0;
    for (int i = 0; i < 4; ++i) masked |= uint32_t{static_cast<unsigned char>(header[8 + i])} << (8 * i);
    if (length > size_ - offset_ - sizeof(header)) {
      throw DataError(path_, offset_, "truncated cache entry (" + std::to_string(length) + " bytes)");
    }
    entry->resize(length);
    if (std::fread(entry->data(), 1, length, file_) != length) {
      throw DataError(path_, offset_, "truncated cache entry");
    }
    if (crc32c::Unmask(masked) != crc32c::Value(entry->data(), entry->size())) {
      throw DataError(path_, offset_, "cache entry CRC mismatch");
    }
    offset_ += sizeof(header) + length;
    return true;
  }

  uint64_t offset() const { return offset_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  uint64_t size_ = 0;
  uint64_t offset_ = 0;
};

// How a cached element is written: like ElementCodec, but records by value (the cache
// exists so as not to read the source again).
template <typename T>
void CacheEncode(const T& v, StateEncoder& e) {
  if constexpr (std::is_same_v<T, Record>) {
    ElementCodec<Record>::EncodeValue(v, e);
  } else {
    ElementCodec<T>::Encode(v, e);
  }
}

// The in-memory cache of one Cache dataset.
template <typename T>
struct MemoryCache {
  std::mutex mu;
  std::shared_ptr<const std::vector<T>> elements;  // guarded by mu; set once, when complete

  std::shared_ptr<const std::vector<T>> Get() {
    std::lock_guard<std::mutex> lock(mu);
    return elements;
  }
  // Publishes a complete pass unless one already was; returns the cached elements.
  std::shared_ptr<const std::vector<T>> Publish(std::vector<T> pass) {
    std::lock_guard<std::mutex> lock(mu);
    if (!elements) elements = std::make_shared<const std::vector<T>>(std::move(pass));
    return elements;
  }
};

template <typename T>
class CacheIterator : public Iterator<T> {
 public:
  CacheIterator(DatasetPtr<T> input, std::string path, std::shared_ptr<MemoryCache<T>> memory,
                const IteratorContext& ctx)
      : input_dataset_(std::move(input)), path_(std::move(path)), memory_(std::move(memory)),
        ctx_(ctx), stats_(ctx.RegisterStats("cache")) {
    if (memory_) {
      replay_elements_ = memory_->Get();
      replaying_ = replay_elements_ != nullptr;
    } else {
      replaying_ = PathExists(path_);
    }
  }

  std::optional<T> Next() override {
    std::optional<T> v = replaying_ ? NextReplayed() : NextFilled();
    if (v) {
      ++position_;
      stats_->elements++;
      stats_->bytes += ElementBytes(*v);
    }
    return v;
  }

  void Save(IteratorState& state) override {
    state.PutInt(ctx_.Key("replaying"), replaying_ ? 1 : 0);
    state.PutInt(ctx_.Key("position"), static_cast<int64_t>(position_));
    if (replaying_) {
      if (!memory_) {
        state.PutInt(ctx_.Key("file_offset"),
                     static_cast<int64_t>(reader_ ? reader_->offset() : file_offset_));
      }
      return;
    }
    state.PutInt(ctx_.Key("input_ended"), input_ended_ ? 1 : 0);
    Input().Save(state);
  }

  void Restore(const IteratorState& state) override {
    replaying_ = state.GetInt(ctx_.Key("replaying")) != 0;
    int64_t position = state.GetInt(ctx_.Key("position"));
    if (position < 0) throw Error("iterator state " + ctx_.Key("position") + ": negative position");
    position_ = static_cast<uint64_t>(position);
    reader_.reset();
    writer_.reset();
    pass_.clear();
    input_.reset();
    if (replaying_) {
      RestoreReplay(state);
      return;
    }
    // A fill pass: the rest of it comes from the restored input; it is cached only if
    // it is a whole pass.
    input_ended_ = state.GetInt(ctx_.Key("input_ended")) != 0;
    Input().Restore(state);
    caching_ = position_ == 0 && !input_ended_;
  }

 private:
  void RestoreReplay(const IteratorState& state) {
    if (memory_) {
      if constexpr (std::is_copy_constructible_v<T>) {
        replay_elements_ = memory_->Get();
        // 1. A new process: fill the cache from the input (epoch 0) first.
        if (!replay_elements_) {
          std::vector<T> pass;
          while (std::optional<T> v = PullInput()) pass.push_back(std::move(*v));
          input_.reset();
          replay_elements_ = memory_->Publish(std::move(pass));
        }
        // 2. Continue at the saved position.
        if (position_ > replay_elements_->size()) {
          throw Error("iterator state " + ctx_.Key("position") + ": position " +
                      std::to_string(position_) + " is beyond the " +
                      std::to_string(replay_elements_->size()) + " cached elements");
        }
      }
      return;
    }
    if (!PathExists(path_)) {
      throw Error("cache: the state was saved while replaying " + path_ +
                  ", which no longer exists");
    }
    int64_t offset = state.GetInt(ctx_.Key("file_offset"));
    if (offset < 0) throw Error("iterator state " + ctx_.Key("file_offset") + ": negative offset");
    file_offset_ = static_cast<uint64_t>(offset);
  }

  std::optional<T> NextReplayed() {
    auto start = std::chrono::steady_clock::now();
    std::optional<T> v;
    if (memory_) {
      if constexpr (std::is_copy_constructible_v<T>) {
        if (position_ < replay_elements_->size()) v = (*replay_elements_)[position_];
      }
    } else {
      if (!reader_) reader_ = std::make_unique<CacheFileReader>(path_, file_offset_);
      uint64_t offset = reader_->offset();
      if (reader_->Next(&entry_)) {
        StateDecoder d(entry_, path_ + ": cache entry at offset " + std::to_string(offset));
        v = ElementCodec<T>::Decode(d);
        if (!d.done()) throw DataError(path_, offset, "cache entry has trailing bytes");
      }
    }
    StageStats::AddSince(stats_->busy_ns, start);
    return v;
  }

  std::optional<T> NextFilled() {
    if (input_ended_) return std::nullopt;
    std::optional<T> v = PullInput();
    auto start = std::chrono::steady_clock::now();
    if (!v) {
      input_ended_ = true;
      if (caching_) CommitPass();
    } else if (caching_) {
      if (memory_) {
        if constexpr (std::is_copy_constructible_v<T>) pass_.push_back(*v);
      } else {
        if (!writer_) writer_ = std::make_unique<CacheFileWriter>(path_);
        StateEncoder e;
        CacheEncode(*v, e);
        writer_->Append(e.Finish());
      }
    }
    StageStats::AddSince(stats_->busy_ns, start);
    return v;
  }

  // The pass completed: publish it.
  void CommitPass() {
    caching_ = false;
    if (memory_) {
      memory_->Publish(std::move(pass_));
      pass_.clear();
    } else {
      if (!writer_) writer_ = std::make_unique<CacheFileWriter>(path_);  // an empty pass
      writer_->Commit();
      writer_.reset();
    }
  }

  // The input iterator, made on first use: always for epoch 0.
  Iterator<T>& Input() {
    if (!input_) {
      IteratorContext first_epoch = ctx_;
      first_epoch.epoch = 0;
      input_ = MakeInputIterator(input_dataset_, first_epoch);
    }
    return *input_;
  }

  std::optional<T> PullInput() {
    auto start = std::chrono::steady_clock::now();
    std::optional<T> v = Input().Next();
    StageStats::AddSince(stats_->input_wait_ns, start);
    return v;
  }

  DatasetPtr<T> input_dataset_;
  std::string path_;                      // empty: in memory
  std::shared_ptr<MemoryCache<T>> memory_;  // null: in a file
  IteratorContext ctx_;
  StageStats* stats_;
  bool replaying_ = false;
  uint64_t position_ = 0;  // elements produced by this iterator
  // Replaying.
  std::shared_ptr<const std::vector<T>> replay_elements_;  // in memory
  std::unique_ptr<CacheFileReader> reader_;                // in a file, opened on first use
  uint64_t file_offset_ = 0;                               // where reader_ starts
  std::string entry_;
  // Filling.
  std::unique_ptr<Iterator<T>> input_;
  bool input_ended_ = false;
  bool caching_ = true;   // this pass is whole so far and will be published
  std::vector<T> pass_;   // in memory: the pass so far
  std::unique_ptr<CacheFileWriter> writer_;  // in a file: made on the first element
};

template <typename T>
class CacheDataset : public Dataset<T> {
 public:
  CacheDataset(DatasetPtr<T> input, std::string path)
      : input_(std::move(input)), path_(std::move(path)) {
    if (path_.empty()) memory_ = std::make_shared<MemoryCache<T>>();
  }
  std::unique_ptr<Iterator<T>> MakeIterator(const IteratorContext& ctx) const override {
    return std::make_unique<CacheIterator<T>>(input_, path_, memory_, ctx);
  }
  std::string name() const override { return "cache"; }

 private:
  DatasetPtr<T> input_;
  std::string path_;
  std::shared_ptr<MemoryCache<T>> memory_;
};

}  // namespace internal

// The elements of `input`, read from it once; see the file comment. Throws Error for an
// in-memory cache (empty path) of elements that cannot be copied (Sample, Batch).
template <typename T>
DatasetPtr<T> Cache(DatasetPtr<T> input, std::string path = "") {
  if (path.empty() && !std::is_copy_constructible_v<T>) {
    throw Error("cache: elements that cannot be copied (samples, batches) need a cache file path");
  }
  return std::make_shared<internal::CacheDataset<T>>(std::move(input), std::move(path));
}

}  // namespace imgpipe::pipeline
