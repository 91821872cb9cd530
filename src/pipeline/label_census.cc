#include "pipeline/label_census.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <set>
#include <nlohmann/json.hpp>

#include "io/storage.h"
#include "record/crc32c.h"
#include "record/example.h"
#include "record/example_view.h"
#include "record/image_feature_keys.h"
#include "record/tfrecord_reader.h"
#include "util/error.h"
#include "util/file.h"
#include "util/logging.h"
#include "util/thread_pool.h"

namespace imgpipe::pipeline {
namespace {

// Reader options that pass over corrupt records (counted, logged) instead of throwing.
TfRecordReaderOptions SkippingReader() {
  TfRecordReaderOptions options;
  options.policy = ErrorPolicy::kSkip;
  return options;
}

constexpr int kCacheVersion = 1;
constexpr char kSynsetKey[] = "image/class/synset";

// One record's label and, for a label not met before in this file, its text and synset.
struct RecordLabel {
  std::optional<int64_t> label;
  std::optional<std::string> text, synset;
};

// The label feature of serialized Example `data`, read in place when it is in the plain
// encoding, else by protobuf; nullopt when it does not parse (a bad record).
std::optional<RecordLabel> ReadLabel(std::string_view data, const std::string& key, const LabelCensus& seen) {
  RecordLabel r;
  auto add_names = [&](auto bytes) {
    if (!r.label || seen.text.count(*r.label) || seen.synset.count(*r.label)) return;
    if (auto text = bytes(image_keys::kClassText)) r.text = std::string(*text);
    if (auto synset = bytes(kSynsetKey)) r.synset = std::string(*synset);
  };
  if (std::optional<ExampleView> view = ExampleView::Scan(data)) {
    r.label = view->FirstInt64(key);
    add_names([&](const char* k) { return view->FirstBytes(k); });
    return r;
  }
  Example example;
  if (!example.ParseFromArray(data.data(), static_cast<int>(data.size()))) return std::nullopt;
  r.label = GetInt64Feature(example.features(), key);
  add_names([&](const char* k) { return GetBytesFeature(example.features(), k); });
  return r;
}

// The labels of up to `limit` records of `path` (a sample's reader when `piece_bytes` >
// 0); *names receives each new label's text and synset; `on_bytes` (may be null) is
// told of the bytes read, every 4 MiB and at the end.
FileLabels ReadFileLabels(const std::string& path, const std::string& key, int64_t limit, uint64_t piece_bytes,
                          LabelCensus* names, const std::function<void(uint64_t)>& on_bytes) {
  const std::unique_ptr<TfRecordReader> reader = OpenSkippingReader(path, piece_bytes);
  FileLabels f;
  f.path = path;
  uint64_t reported = 0;
  auto bytes_read = [&] { return reader->stats().data_bytes + reader->stats().skipped_bytes + 16 * f.records; };
  std::string data;
  for (; f.records < limit; ++f.records) {
    if (!reader->Next(&data)) {
      f.complete = true;
      break;
    }
    std::optional<RecordLabel> r = ReadLabel(data, key, *names);
    if (!r || !r->label) continue;  // a bad or unlabelled record: the pipeline meets it
    const int64_t label = *r->label;
    ++f.labelled;
    if (f.max < f.min || label < f.min) f.min = label, f.min_offset = reader->record_offset();
    if (f.max < f.min || label > f.max) f.max = label, f.max_offset = reader->record_offset();
    if (r->text) names->text.emplace(label, *r->text);
    if (r->synset) names->synset.emplace(label, *r->synset);
    if (on_bytes && bytes_read() - reported >= (4 << 20)) on_bytes(bytes_read() - std::exchange(reported, bytes_read()));
  }
  if (!f.complete && f.records == limit) f.complete = !reader->Next(&data);
  if (on_bytes) on_bytes(bytes_read() - reported);
  return f;
}

// The size and modification time of each of `paths` (a URL's size; many at once).
std::vector<FileLabels> StatFiles(const std::vector<std::string>& paths) {
  std::vector<FileLabels> stats(paths.size());
  ForEachStoragePath(paths, [&](size_t i) {
    stats[i].path = paths[i];
    if (IsUrl(paths[i])) {
      stats[i].size = StorageSize(paths[i]);
      return;
    }
    struct stat st {};
    if (::stat(paths[i].c_str(), &st) != 0) throw IoError(paths[i], "stat", errno);
    stats[i].size = static_cast<uint64_t>(st.st_size);
    stats[i].mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  });
  return stats;
}

// The name of `path` in the cache file `cache_path`: its base name when the cache lies
// beside it (the folder may move), else the path.
std::string CacheKey(const std::string& path, const std::string& cache_path) {
  return DirName(path) == DirName(cache_path) ? BaseName(path) : path;
}

// The cache file `cache_path` parsed: a JSON object of kCacheVersion under `label_key`, else
// null (missing, unreadable, of another version or key: read as no cache).
nlohmann::json ReadCacheFile(const std::string& cache_path, const std::string& label_key) {
  if (cache_path.empty() || !PathExists(cache_path)) return nullptr;
  nlohmann::json cache;
  try {
    cache = nlohmann::json::parse(ReadFile(cache_path), nullptr, /*allow_exceptions=*/false);
  } catch (const std::exception& e) {
    LogWarning(cache_path + ": not read (" + e.what() + "); the labels are read again");
    return nullptr;
  }
  if (!cache.is_object() || cache.value("version", 0) != kCacheVersion || cache.value("label_key", "") != label_key ||
      !cache["files"].is_array() || !cache["text"].is_object() || !cache["synset"].is_object()) {
    return nullptr;
  }
  return cache;
}

// The entry of each cached file by its key, and the names, from `cache` (ReadCacheFile's).
std::map<std::string, FileLabels> CachedEntries(const nlohmann::json& cache, LabelCensus* names) {
  std::map<std::string, FileLabels> entries;
  if (cache.is_null()) return entries;
  try {
    for (const nlohmann::json& e : cache["files"]) {
      FileLabels f;
      f.size = e.at("size").get<uint64_t>(), f.mtime_ns = e.at("mtime_ns").get<int64_t>();
      f.records = e.at("records").get<int64_t>(), f.labelled = e.at("labelled").get<int64_t>();
      f.min = e.at("min").get<int64_t>(), f.max = e.at("max").get<int64_t>();
      f.min_offset = e.at("min_offset").get<uint64_t>(), f.max_offset = e.at("max_offset").get<uint64_t>();
      f.complete = true;
      entries[e.at("name").get<std::string>()] = f;
    }
    for (const auto& [label, text] : cache["text"].items()) names->text.emplace(std::stoll(label), text.get<std::string>());
    for (const auto& [label, synset] : cache["synset"].items()) names->synset.emplace(std::stoll(label), synset.get<std::string>());
  } catch (const std::exception&) {  // a hand-edited or foreign file: no cache
    names->text.clear(), names->synset.clear();
    return {};
  }
  return entries;
}

// Writes `census` to `cache_path` with the entries of `old` (ReadCacheFile's) for files it
// does not hold (another pattern's files in the same folder); returns whether it did.
bool WriteCacheFile(const LabelCensus& census, const nlohmann::json& old, const std::string& label_key,
                    const std::string& cache_path) {
  nlohmann::json files = nlohmann::json::array(), text = nlohmann::json::object(), synset = nlohmann::json::object();
  std::set<std::string> written;
  for (const FileLabels& f : census.files) {
    written.insert(CacheKey(f.path, cache_path));
    files.push_back({{"name", CacheKey(f.path, cache_path)}, {"size", f.size}, {"mtime_ns", f.mtime_ns},
                     {"records", f.records}, {"labelled", f.labelled}, {"min", f.min}, {"max", f.max},
                     {"min_offset", f.min_offset}, {"max_offset", f.max_offset}});
  }
  if (!old.is_null()) {
    for (const nlohmann::json& e : old["files"]) {
      if (e.is_object() && !written.count(e.value("name", ""))) files.push_back(e);
    }
  }
  for (const auto& [label, name] : census.text) text[std::to_string(label)] = name;
  for (const auto& [label, name] : census.synset) synset[std::to_string(label)] = name;
  const nlohmann::json out{{"version", kCacheVersion}, {"label_key", label_key}, {"files", files},
                           {"text", text}, {"synset", synset}};
  try {
    MakeDirectories(DirName(cache_path));
    WriteFileAtomic(cache_path, out.dump(1) + "\n", /*sync=*/false);
    return true;
  } catch (const std::exception& e) {
    LogWarning(std::string("the label scan was not kept: ") + e.what());
    return false;
  }
}

// Whether the cached `entry` still describes `now` (StatFiles').
bool Unchanged(const FileLabels& entry, const FileLabels& now) {
  return entry.size == now.size && entry.mtime_ns == now.mtime_ns;
}

}  // namespace

std::unique_ptr<TfRecordReader> OpenSkippingReader(const std::string& path, uint64_t piece_bytes) {
  if (!IsUrl(path) || piece_bytes == 0) return std::make_unique<TfRecordReader>(path, SkippingReader());
  std::unique_ptr<ByteSource> source = OpenByteSource(path);
  std::vector<ByteRange> pieces = SplitIntoPieces({0, source->size()}, piece_bytes);
  return std::make_unique<TfRecordReader>(ReadRangesAhead(std::move(source), std::move(pieces)), SkippingReader());
}

int64_t LabelCensus::records() const {
  int64_t n = 0;
  for (const FileLabels& f : files) n += f.records;
  return n;
}

int64_t LabelCensus::labelled() const {
  int64_t n = 0;
  for (const FileLabels& f : files) n += f.labelled;
  return n;
}

const FileLabels* LabelCensus::FileWithMin() const {
  const FileLabels* best = nullptr;
  for (const FileLabels& f : files) {
    if (f.max >= f.min && (!best || f.min < best->min)) best = &f;
  }
  return best;
}

const FileLabels* LabelCensus::FileWithMax() const {
  const FileLabels* best = nullptr;
  for (const FileLabels& f : files) {
    if (f.max >= f.min && (!best || f.max > best->max)) best = &f;
  }
  return best;
}

int64_t LabelCensus::min() const { return FileWithMin() ? FileWithMin()->min : 0; }
int64_t LabelCensus::max() const { return FileWithMax() ? FileWithMax()->max : -1; }

bool LabelCensus::complete() const {
  return !files.empty() && std::all_of(files.begin(), files.end(), [](const FileLabels& f) { return f.complete; });
}

LabelCensus SampleLabels(const std::vector<std::string>& paths, const std::string& label_key, int64_t per_file) {
  // A URL is read in pieces of about `per_file` records (128 KiB each; 1 to 8 MiB).
  const uint64_t piece_bytes = std::clamp<uint64_t>(static_cast<uint64_t>(per_file) << 17, 1 << 20, 8 << 20);
  std::vector<LabelCensus> names(paths.size());
  std::vector<FileLabels> files(paths.size());
  ForEachStoragePath(paths, [&](size_t i) {
    files[i] = ReadFileLabels(paths[i], label_key, per_file, piece_bytes, &names[i], nullptr);
  });
  LabelCensus sample;
  sample.files = std::move(files);
  for (const LabelCensus& n : names) {  // a label's first text stays
    sample.text.insert(n.text.begin(), n.text.end());
    sample.synset.insert(n.synset.begin(), n.synset.end());
  }
  return sample;
}

std::string LabelCensusCachePath(const std::string& dir) {
  if (!IsUrl(dir) && IsDirectory(dir) && ::access(dir.c_str(), W_OK) == 0) return JoinPath(dir, "labels.scan.json");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::string root = xdg && *xdg ? xdg : JoinPath(home && *home ? home : "/tmp", ".cache");
  char name[32];
  std::snprintf(name, sizeof(name), "%08x.json", crc32c::Value(dir.data(), dir.size()));
  return JoinPath(JoinPath(root, "imgpipe/label-scans"), name);
}

LabelCensus CachedLabelCensus(const std::vector<std::string>& paths, const std::string& label_key,
                              const std::string& cache_path) {
  LabelCensus census;
  const std::map<std::string, FileLabels> entries = CachedEntries(ReadCacheFile(cache_path, label_key), &census);
  if (entries.empty()) return {};
  const std::vector<FileLabels> now = StatFiles(paths);
  for (const FileLabels& f : now) {
    auto it = entries.find(CacheKey(f.path, cache_path));
    if (it == entries.end() || !Unchanged(it->second, f)) return {};
    census.files.push_back(it->second);
    census.files.back().path = f.path;
  }
  census.cache_path = cache_path;
  census.files_from_cache = static_cast<int64_t>(census.files.size());
  return census;
}

LabelCensus CensusLabels(const std::vector<std::string>& paths, const std::string& label_key,
                         const std::string& cache_path, int threads, const LabelScanProgress& progress) {
  // 1. The cached entries of unchanged files; the others are read.
  const nlohmann::json old = ReadCacheFile(cache_path, label_key);
  LabelCensus census;
  const std::map<std::string, FileLabels> entries = CachedEntries(old, &census);
  census.files = StatFiles(paths);
  std::vector<size_t> to_read;
  uint64_t total = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    auto it = entries.find(CacheKey(paths[i], cache_path));
    if (it != entries.end() && Unchanged(it->second, census.files[i])) {
      census.files[i] = it->second, census.files[i].path = paths[i];
      ++census.files_from_cache;
    } else {
      to_read.push_back(i), total += census.files[i].size;
    }
  }
  // 2. Every record of the others, many files at once.
  const bool network = std::any_of(paths.begin(), paths.end(), [](const std::string& p) { return IsUrl(p); });
  ThreadPool pool(static_cast<int>(std::clamp<size_t>(to_read.size(), 1, network ? 16 : std::max(1, threads))));
  std::mutex mu;
  uint64_t done = 0;  // guarded by mu
  auto on_bytes = [&](uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mu);
    done = std::min(total, done + bytes);
    if (progress) progress(done, total);
  };
  std::vector<LabelCensus> names(to_read.size());
  ParallelFor(pool, to_read.size(), [&](size_t k) {
    const FileLabels stat = census.files[to_read[k]];
    FileLabels& f = census.files[to_read[k]];
    f = ReadFileLabels(paths[to_read[k]], label_key, std::numeric_limits<int64_t>::max(), 0, &names[k], on_bytes);
    f.size = stat.size, f.mtime_ns = stat.mtime_ns;
  });
  for (const LabelCensus& n : names) {
    census.text.insert(n.text.begin(), n.text.end());
    census.synset.insert(n.synset.begin(), n.synset.end());
  }
  // 3. Kept for the next run.
  if (!to_read.empty() || old.is_null()) {
    if (WriteCacheFile(census, old, label_key, cache_path)) census.cache_path = cache_path;
  } else {
    census.cache_path = cache_path;
  }
  return census;
}

}  // namespace imgpipe::pipeline
