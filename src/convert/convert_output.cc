#include "convert/convert_output.h"

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "image/jpeg_transcode.h"
#include "io/storage.h"
#include "record/image_feature_keys.h"
#include "record/index.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

using nlohmann::json;

constexpr char kStateFolder[] = ".imgpipe";

// [[path, reason], ...] for rejects and JPEGs stored without restart markers.
json PathReasonsJson(const std::vector<std::pair<std::string, std::string>>& items) {
  json out = json::array();
  for (const auto& [path, reason] : items) out.push_back({path, reason});
  return out;
}

// The (path, reason) pairs of PathReasonsJson's `doc` (an array; null: none).
std::vector<std::pair<std::string, std::string>> PathReasonsFromJson(const json& doc) {
  std::vector<std::pair<std::string, std::string>> out;
  if (doc.is_null()) return out;
  for (const json& r : doc) out.emplace_back(r.at(0), r.at(1));
  return out;
}

std::string StatePath(const std::string& output, const std::string& name) {
  return JoinPath(JoinPath(output, kStateFolder), name);
}

// 64-bit FNV-1a, to fingerprint the input list in plan.json and name staging folders.
void HashBytes(uint64_t* h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    *h ^= c;
    *h *= 0x100000001b3ull;
  }
}

// `h` as 16 hex digits.
std::string Hex(uint64_t h) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(h));
  return text;
}

// What the run was asked to do. Two runs with equal plan documents produce identical
// shards, so one may finish what the other started.
json PlanDocument(const ConvertOptions& options, const InputList& inputs,
                  const std::vector<uint64_t>& sizes, const ConvertPlan& plan) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < inputs.size(); ++i) {
    HashBytes(&h, inputs.path(i));
    HashBytes(&h, std::string_view("\0", 1));
    HashBytes(&h, std::to_string(inputs.label(i)) + ":" + std::to_string(sizes[i]));
  }
  json splits = json::array();
  for (const SplitSpec& s : options.plan.splits) splits.push_back({s.name, s.fraction});
  json shards = json::array();
  for (const PlannedShard& s : plan.shards) shards.push_back(s.file_name);
  json doc{{"input", options.input},
           {"inputs", inputs.size()},
           {"input_fingerprint", Hex(h)},
           {"classes", inputs.class_names},
           {"splits", splits},
           {"shard_bytes", options.plan.shard_bytes},
           {"min_shards", options.plan.min_shards},
           {"seed", options.plan.seed},
           {"verify", VerifyModeName(options.image.verify)},
           {"non_jpeg", NonJpegPolicyName(options.image.non_jpeg)},
           {"jpeg_quality", options.image.jpeg_quality},
           {"max_pixels", options.image.max_pixels},
           {"shards", shards}};
  // Only when set, so that conversions begun before the option existed still resume.
  if (options.image.max_resolution > 0) doc["max_resolution"] = options.image.max_resolution;
  if (options.image.jpeg_restart_interval > 0) {
    doc["jpeg_restart_interval"] = options.image.jpeg_restart_interval;
  }
  return doc;
}

// "key (A there, B now), ..." for each top-level key whose value differs between the
// plan in the output folder and this run's; lists and objects are not spelled out.
std::string PlanDifferences(const json& there, const json& now) {
  auto shown = [](const json& doc, const std::string& key) -> std::string {
    if (!doc.contains(key)) return "unset";
    const json& v = doc.at(key);
    return v.is_structured() ? "another list" : v.dump();
  };
  std::set<std::string> keys;
  for (const json* doc : {&there, &now}) {
    if (!doc->is_object()) continue;
    for (auto it = doc->begin(); it != doc->end(); ++it) keys.insert(it.key());
  }
  std::string out;
  for (const std::string& key : keys) {
    if (there.is_object() && there.contains(key) && now.contains(key) && there[key] == now[key]) {
      continue;
    }
    if (!out.empty()) out += ", ";
    out += key + " (" + (there.is_object() ? shown(there, key) : "unreadable") + " there, " +
           shown(now, key) + " now)";
  }
  return out;
}

bool IsTemporaryOf(const std::string& name, const std::string& file_name) {
  return name.rfind(file_name + ".", 0) == 0 && name.size() > kTemporarySuffix.size() &&
         name.compare(name.size() - kTemporarySuffix.size(), kTemporarySuffix.size(),
                      kTemporarySuffix) == 0;
}

// Whether `name` is a temporary of `file_name` written by a process that is gone
// ("<file_name>.<pid>.tmp" whose pid no longer runs on this machine).
bool IsTemporaryOfDeadProcess(const std::string& name, const std::string& file_name) {
  if (!IsTemporaryOf(name, file_name)) return false;
  std::string pid = name.substr(file_name.size() + 1,
                                name.size() - file_name.size() - 1 - kTemporarySuffix.size());
  if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) return false;
  return ::kill(static_cast<pid_t>(std::stoll(pid)), 0) != 0 && errno == ESRCH;
}

// The inputs a manifest at a URL lists: its relative paths resolved beside it (objects
// of the same store), absolute ones as local files.
InputList ReadUrlManifest(const std::string& url) {
  if (!IsManifestPath(url)) {
    throw Error(url + ": a URL input must be a manifest (.csv, .jsonl or .json)");
  }
  return ParseManifest(ReadStorageFile(url), url.ends_with(".csv"), DirName(url), url, 4 << 20);
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

void CheckConvertOptions(const ConvertOptions& options) {
  if (options.num_workers < 1 || options.worker < 0 || options.worker >= options.num_workers) {
    throw Error("--worker must be in [0, --num-workers)");
  }
  if (options.output.empty()) throw Error("--output is required");
  if (IsUrl(options.output) && !options.output.starts_with("s3://") &&
      !options.output.starts_with("gs://")) {
    throw Error("--output " + options.output + ": http(s) URLs are read-only; give a folder, "
                "an s3:// or a gs:// prefix");
  }
  if (!options.staging_dir.empty() && !IsUrl(options.output)) {
    throw Error("--staging-dir is for an s3:// or gs:// --output (a folder is written in place)");
  }
  if (IsUrl(options.staging_dir)) throw Error("--staging-dir must be a local folder");
  if (options.threads < 0) throw Error("--threads must be 0 (all CPUs) or positive");
  if (options.image.jpeg_quality < 1 || options.image.jpeg_quality > 100) {
    throw Error("--jpeg-quality must be in [1, 100]");
  }
  if (options.image.jpeg_restart_interval < 0 ||
      options.image.jpeg_restart_interval > kMaxJpegRestartInterval) {
    throw Error("--jpeg-restart-interval must be in [0, " +
                std::to_string(kMaxJpegRestartInterval) + "]");
  }
}

PlannedConversion PlanConversion(const ConvertOptions& options, ThreadPool& pool) {
  PlannedConversion out;
  if (IsRecordInput(options.input)) {
    out.records = ListRecordInputs(options.input, pool, &out.inputs, &out.sizes);
    out.plan = MakeRecordConvertPlan(out.records, out.sizes, options.plan);
    out.plan_document = PlanDocument(options, out.inputs, out.sizes, out.plan);
    return out;
  }
  out.inputs = IsUrl(options.input) ? ReadUrlManifest(options.input) : ListInputs(options.input);
  out.sizes.assign(out.inputs.size(), 0);
  ParallelFor(pool, out.inputs.size(), [&](size_t i) {
    try {
      out.sizes[i] = StorageSize(out.inputs.path(i));
    } catch (const Error&) {
      // Unreadable inputs are rejected with their reason when converted.
    }
  });
  out.plan = MakeConvertPlan(out.inputs, out.sizes, options.plan);
  out.plan_document = PlanDocument(options, out.inputs, out.sizes, out.plan);
  return out;
}

void CheckOrWritePlan(const std::string& output, const json& plan_document) {
  if (!IsUrl(output)) MakeDirectories(StateFolder(output));
  if (StorageExists(StatePath(output, "plan.json"))) {
    CheckPlanExists(output, plan_document);
    return;
  }
  WriteStorageFile(StatePath(output, "plan.json"), plan_document.dump(2) + "\n");
}

void CheckPlanExists(const std::string& output, const json& plan_document) {
  std::string path = StatePath(output, "plan.json");
  if (!StorageExists(path)) {
    throw Error(output + ": no conversion was begun there (no " + path +
                "); run the workers first, with the same options");
  }
  json existing = json::parse(ReadStorageFile(path), nullptr, false);
  if (existing != plan_document) {
    throw Error(output + ": holds a conversion with a different plan: " +
                PlanDifferences(existing, plan_document) + " (see " + path +
                "); use a new --output folder, or the options it was begun with");
  }
}

std::string WorkFolder(const ConvertOptions& options) {
  if (!IsUrl(options.output)) return options.output;
  return options.staging_dir.empty() ? DefaultStagingFolder(options.output) : options.staging_dir;
}

std::string DefaultStagingFolder(const std::string& url) {
  std::string key = url;
  while (!key.empty() && key.back() == '/') key.pop_back();
  uint64_t h = 0xcbf29ce484222325ull;
  HashBytes(&h, key);
  std::string name;
  for (char c : key.substr(0, 100)) {
    name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
  }
  const char* tmp = std::getenv("TMPDIR");
  const std::string root = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  return JoinPath(JoinPath(root, "imgpipe-staging"), name + "-" + Hex(h));
}

bool CheckOrWriteStagingPlan(const std::string& staging, const json& plan_document) {
  MakeDirectories(StateFolder(staging));
  const std::string path = StatePath(staging, "plan.json");
  if (PathExists(path) && json::parse(ReadFile(path), nullptr, false) == plan_document) return true;
  // Another plan's staged shards (or none): cleared, so that none lingers.
  for (const std::string& folder : {staging, StateFolder(staging)}) {
    for (const std::string& name : ListDirectory(folder)) {
      if (name.ends_with(".tfrecord") || name.ends_with(".tfrecord.idx") ||
          name.ends_with(".tfrecord.json")) {
        RemoveFile(JoinPath(folder, name));
      }
    }
  }
  WriteFileAtomic(path, plan_document.dump(2) + "\n");
  return false;
}

std::string StateFolder(const std::string& output) { return JoinPath(output, kStateFolder); }

std::string PartPath(const std::string& output, const PlannedShard& shard) {
  return StatePath(output, shard.file_name + ".json");
}

void RemoveDeadSummaryTemporaries(const std::string& output) {
  if (IsUrl(output)) return;  // objects appear only whole: no temporaries
  for (const std::string& name : ListDirectory(output)) {
    for (const char* file : {"labels.txt", "dataset.json", "rejects.csv"}) {
      if (IsTemporaryOfDeadProcess(name, file)) RemoveFile(JoinPath(output, name));
    }
  }
  for (const std::string& name : ListDirectory(StateFolder(output))) {
    if (IsTemporaryOfDeadProcess(name, "plan.json")) RemoveFile(StatePath(output, name));
  }
}

OutputListing ListOutput(const std::string& output) {
  OutputListing listing;
  for (const StorageEntry& e : ListStorageFolderSizes(output)) listing.files[e.name] = e.size;
  for (const StorageEntry& e : ListStorageFolderSizes(StateFolder(output))) {
    listing.state_files[e.name] = e.size;
  }
  return listing;
}

void RemoveShardTemporaries(const std::string& output, const OutputListing& listing,
                            const PlannedShard& shard) {
  for (const auto& [name, size] : listing.files) {
    if (IsTemporaryOf(name, shard.file_name)) RemoveFile(JoinPath(output, name));
  }
  for (const auto& [name, size] : listing.state_files) {
    if (IsTemporaryOf(name, shard.file_name)) RemoveFile(StatePath(output, name));
  }
}

void RemoveShardFiles(const std::string& output, const OutputListing& listing,
                      const PlannedShard& shard) {
  // The shard first: what is left then is never counted as a finished shard.
  for (const std::string& name : {shard.file_name, IndexPathFor(shard.file_name)}) {
    if (listing.files.count(name)) DeleteStorageFile(JoinPath(output, name));
  }
  if (listing.state_files.count(shard.file_name + ".json")) {
    DeleteStorageFile(PartPath(output, shard));
  }
}

void UploadShard(const std::string& staging, const std::string& output,
                 const PlannedShard& shard, ConvertOptions::Uploader upload) {
  if (upload == nullptr) upload = &UploadStorageFile;
  const std::string local = JoinPath(staging, shard.file_name);
  const std::string remote = JoinPath(output, shard.file_name);
  // 1. The index and the part file, then the shard: a shard object always has both.
  upload(IndexPathFor(local), IndexPathFor(remote));
  upload(PartPath(staging, shard), PartPath(output, shard));
  upload(local, remote);
  // 2. The local copies, the shard first (a staged shard without it is not finished).
  RemoveFile(local);
  RemoveFile(IndexPathFor(local));
  RemoveFile(PartPath(staging, shard));
}

json ShardPart::ToJson(const PlannedShard& shard) const {
  json classes = json::object();
  for (auto& [label, n] : per_class) classes[std::to_string(label)] = n;
  const json rejected = PathReasonsJson(rejects);
  json doc{{"file", shard.file_name}, {"split", shard.split},
           {"inputs", shard.inputs.size()}, {"records", records},
           {"bytes", bytes}, {"per_class", classes}, {"rejects", rejected}};
  // Only when some were, so that a conversion without restart markers is as before.
  if (restart_markers_added > 0) doc["restart_markers_added"] = restart_markers_added;
  if (!restart_failures.empty()) doc["restart_failures"] = PathReasonsJson(restart_failures);
  if (shard_crc32c) doc["crc32c"] = *shard_crc32c;
  if (index_crc32c) doc["index_crc32c"] = *index_crc32c;
  return doc;
}

ShardPart ShardPart::FromJson(const json& doc) {
  ShardPart part;
  part.records = doc.at("records").get<uint64_t>();
  part.bytes = doc.at("bytes").get<uint64_t>();
  part.restart_markers_added = doc.value("restart_markers_added", uint64_t{0});
  part.restart_failures = PathReasonsFromJson(doc.value("restart_failures", json()));
  for (auto& [label, n] : doc.at("per_class").items()) {
    part.per_class.emplace_back(std::stoi(label), n.get<uint64_t>());
  }
  std::sort(part.per_class.begin(), part.per_class.end());  // the keys sort as text
  part.rejects = PathReasonsFromJson(doc.at("rejects"));
  if (doc.contains("crc32c")) part.shard_crc32c = doc.at("crc32c").get<uint32_t>();
  if (doc.contains("index_crc32c")) part.index_crc32c = doc.at("index_crc32c").get<uint32_t>();
  return part;
}

void WriteShardPart(const std::string& output, const PlannedShard& shard, const ShardPart& part) {
  WriteFileAtomic(PartPath(output, shard), part.ToJson(shard).dump(1) + "\n");
}

std::optional<ShardPart> LoadFinishedPart(const std::string& output, const OutputListing& listing,
                                          const PlannedShard& shard) {
  const auto shard_file = listing.files.find(shard.file_name);
  if (!listing.state_files.count(shard.file_name + ".json") || shard_file == listing.files.end() ||
      !listing.files.count(IndexPathFor(shard.file_name))) {
    return std::nullopt;
  }
  json doc = json::parse(ReadStorageFile(PartPath(output, shard)), nullptr, false);
  if (doc.is_discarded()) return std::nullopt;
  ShardPart part;
  try {
    part = ShardPart::FromJson(doc);
  } catch (const json::exception&) {
    return std::nullopt;  // not a part file this version wrote: the shard is redone
  }
  if (shard_file->second != part.bytes ||
      part.records + part.rejects.size() != shard.inputs.size()) {
    return std::nullopt;
  }
  return part;
}

void CountFinishedShard(const PlannedShard& shard, const ShardPart& part, ConvertSummary* summary) {
  ++summary->shards_done;
  summary->written += part.records;
  summary->rejected += part.rejects.size();
  summary->restart_markers_added += part.restart_markers_added;
  for (const auto& [path, reason] : part.restart_failures) ++summary->restart_failures[reason];
  summary->output_bytes += part.bytes;
  summary->shards.push_back({shard.file_name, shard.split, part.records, part.bytes});
}

void WriteDatasetFiles(const std::string& output, const PlannedConversion& conversion,
                       const std::vector<ShardPart>& parts) {
  const InputList& inputs = conversion.inputs;
  const ConvertPlan& plan = conversion.plan;
  const json& plan_doc = conversion.plan_document;
  std::string labels;
  for (const std::string& name : inputs.class_names) labels += name + "\n";

  std::string rejects = "path,reason\n";
  json splits = json::object();
  json shards = json::array();
  uint64_t written = 0, rejected = 0, restart_markers_added = 0;
  json restart_failures = json::array();
  for (size_t i = 0; i < plan.shards.size(); ++i) {
    const PlannedShard& shard = plan.shards[i];
    const ShardPart& part = parts[i];
    json& split = splits[shard.split];
    if (split.is_null()) {
      split = json{{"records", 0}, {"rejected", 0}, {"bytes", 0}, {"shards", shard.count},
                   {"per_class", std::vector<uint64_t>(inputs.class_names.size(), 0)}};
    }
    split["records"] = split["records"].get<uint64_t>() + part.records;
    split["rejected"] = split["rejected"].get<uint64_t>() + part.rejects.size();
    split["bytes"] = split["bytes"].get<uint64_t>() + part.bytes;
    for (auto& [label, n] : part.per_class) {
      split["per_class"][label] = split["per_class"][label].get<uint64_t>() + n;
    }
    shards.push_back({{"file", shard.file_name}, {"split", shard.split},
                      {"records", part.records}, {"bytes", part.bytes}});
    for (auto& [path, reason] : part.rejects) rejects += CsvField(path) + "," + CsvField(reason) + "\n";
    written += part.records;
    rejected += part.rejects.size();
    restart_markers_added += part.restart_markers_added;
    for (const auto& [path, reason] : part.restart_failures) restart_failures.push_back({path, reason});
  }
  if (written + rejected != inputs.size()) {
    throw Error(output + ": written (" + std::to_string(written) + ") + rejected (" +
                std::to_string(rejected) + ") != inputs (" +
                std::to_string(inputs.size()) + ")");
  }
  json keys = json::array({image_keys::kEncoded, image_keys::kFormat, image_keys::kLabel,
               image_keys::kClassText, image_keys::kHeight, image_keys::kWidth,
               image_keys::kChannels, image_keys::kColorspace, image_keys::kFilename});
  if (plan_doc.contains("max_resolution")) {
    keys.push_back(image_keys::kOriginalHeight);
    keys.push_back(image_keys::kOriginalWidth);
  }
  json dataset{{"format", "tfrecord"},
               {"example_keys", keys},
               {"inputs", inputs.size()},
               {"written", written},
               {"rejected", rejected},
               {"classes", inputs.class_names},
               {"splits", splits},
               {"shards", shards},
               {"options", plan_doc}};
  if (plan_doc.contains("jpeg_restart_interval")) {
    dataset["restart_markers_added"] = restart_markers_added;
    dataset["restart_failures"] = restart_failures;  // (path, why) stored as given
  }
  // dataset.json goes last: when it already holds this text, so do the others (a resumed
  // run of a finished conversion writes nothing).
  const std::string dataset_text = dataset.dump(2) + "\n";
  const std::string dataset_path = JoinPath(output, "dataset.json");
  if (StorageExists(dataset_path) && ReadStorageFile(dataset_path) == dataset_text) return;
  WriteStorageFile(JoinPath(output, "labels.txt"), labels);
  WriteStorageFile(JoinPath(output, "rejects.csv"), rejects);
  WriteStorageFile(dataset_path, dataset_text);
}

}  // namespace imgpipe
