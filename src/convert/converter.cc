#include "convert/converter.h"

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <deque>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "image/jpeg_transcode.h"
#include "record/image_feature_keys.h"
#include "record/index.h"
#include "record/tfrecord_writer.h"
#include "util/error.h"
#include "util/file.h"
#include "util/logging.h"
#include "util/thread_pool.h"

namespace imgpipe {
namespace {

using nlohmann::json;

constexpr char kStateFolder[] = ".imgpipe";

std::string StatePath(const std::string& output, const std::string& name) {
  return JoinPath(JoinPath(output, kStateFolder), name);
}

std::string PartPath(const std::string& output, const PlannedShard& shard) {
  return StatePath(output, shard.file_name + ".json");
}

// 64-bit FNV-1a, to fingerprint the input list in plan.json.
void HashBytes(uint64_t* h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    *h ^= c;
    *h *= 0x100000001b3ull;
  }
}

// What the run was asked to do. Two runs with equal plan documents produce identical
// shards, so one may finish what the other started.
json PlanDocument(const ConvertOptions& options, const InputList& inputs,
                  const std::vector<uint64_t>& sizes, const ConvertPlan& plan) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < inputs.images.size(); ++i) {
    HashBytes(&h, inputs.images[i].path);
    HashBytes(&h, std::string_view("\0", 1));
    HashBytes(&h, std::to_string(inputs.images[i].label) + ":" + std::to_string(sizes[i]));
  }
  json splits = json::array();
  for (const SplitSpec& s : options.plan.splits) splits.push_back({s.name, s.fraction});
  json shards = json::array();
  for (const PlannedShard& s : plan.shards) shards.push_back(s.file_name);
  char fingerprint[17];
  std::snprintf(fingerprint, sizeof(fingerprint), "%016llx", static_cast<unsigned long long>(h));
  json doc{{"input", options.input},
              {"inputs", inputs.images.size()},
              {"input_fingerprint", fingerprint},
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

// Records plan.json, or checks that the one already there is the same plan.
void CheckOrWritePlan(const std::string& output, const json& plan_doc) {
  std::string path = StatePath(output, "plan.json");
  if (PathExists(path)) {
    json existing = json::parse(ReadFile(path), nullptr, false);
    if (existing != plan_doc) {
      throw Error(output + ": holds a conversion with a different plan: " +
                  PlanDifferences(existing, plan_doc) + " (see " + path +
                  "); use a new --output folder, or the options it was begun with");
    }
    return;
  }
  WriteFileAtomic(path, plan_doc.dump(2) + "\n");
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

// Removes leftovers of the files every worker may write (plan and summaries) that a
// killed process left; those of running workers stay.
void RemoveDeadSummaryTemporaries(const std::string& output, const std::vector<std::string>& names,
                                  const std::vector<std::string>& state_names) {
  for (const char* file : {"labels.txt", "dataset.json", "rejects.csv"}) {
    for (const std::string& name : names) {
      if (IsTemporaryOfDeadProcess(name, file)) RemoveFile(JoinPath(output, name));
    }
  }
  for (const std::string& name : state_names) {
    if (IsTemporaryOfDeadProcess(name, "plan.json")) RemoveFile(StatePath(output, name));
  }
}

// Removes a killed run's leftovers (AtomicFileWriter temporaries) of `shard`: of the
// shard and its index in the output folder, and of its part file in the state folder.
void RemoveTemporaries(const std::string& output, const std::vector<std::string>& names,
                       const std::vector<std::string>& state_names, const PlannedShard& shard) {
  for (const std::string& name : names) {
    if (IsTemporaryOf(name, shard.file_name)) RemoveFile(JoinPath(output, name));
  }
  for (const std::string& name : state_names) {
    if (IsTemporaryOf(name, shard.file_name)) RemoveFile(StatePath(output, name));
  }
}

// One input's outcome: a record to write, or a reason to reject it.
struct ItemResult {
  ImageExample example;
  std::string reject_reason;  // empty when `example` is good
};

struct ShardPart {
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t restart_markers_added = 0;  // records whose JPEG was given restart markers
  std::map<int, uint64_t> per_class;
  std::vector<std::pair<std::string, std::string>> rejects;  // path, reason

  json ToJson(const PlannedShard& shard) const {
    json classes = json::object();
    for (auto& [label, n] : per_class) classes[std::to_string(label)] = n;
    json rejected = json::array();
    for (auto& [path, reason] : rejects) rejected.push_back({path, reason});
    json doc{{"file", shard.file_name}, {"split", shard.split},
             {"inputs", shard.inputs.size()}, {"records", records},
             {"bytes", bytes}, {"per_class", classes}, {"rejects", rejected}};
    // Only when some were, so that a conversion without restart markers is as before.
    if (restart_markers_added > 0) doc["restart_markers_added"] = restart_markers_added;
    return doc;
  }

  static ShardPart FromJson(const json& doc) {
    ShardPart part;
    part.records = doc.at("records").get<uint64_t>();
    part.bytes = doc.at("bytes").get<uint64_t>();
    part.restart_markers_added = doc.value("restart_markers_added", uint64_t{0});
    for (auto& [label, n] : doc.at("per_class").items()) {
      part.per_class[std::stoi(label)] = n.get<uint64_t>();
    }
    for (auto& r : doc.at("rejects")) part.rejects.emplace_back(r.at(0), r.at(1));
    return part;
  }
};

// A shard is done when its part file, the shard and its index are all in place.
std::optional<ShardPart> LoadFinishedPart(const std::string& output, const PlannedShard& shard) {
  std::string part_path = PartPath(output, shard);
  std::string shard_path = JoinPath(output, shard.file_name);
  if (!PathExists(part_path) || !PathExists(shard_path) ||
      !PathExists(IndexPathFor(shard_path))) {
    return std::nullopt;
  }
  json doc = json::parse(ReadFile(part_path), nullptr, false);
  if (doc.is_discarded()) return std::nullopt;
  ShardPart part = ShardPart::FromJson(doc);
  if (FileSize(shard_path) != part.bytes ||
      part.records + part.rejects.size() != shard.inputs.size()) {
    return std::nullopt;
  }
  return part;
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

// Writes labels.txt, dataset.json and rejects.csv from the finished parts.
void WriteDatasetFiles(const std::string& output, const InputList& inputs,
                       const ConvertPlan& plan, const std::vector<ShardPart>& parts,
                       const json& plan_doc) {
  std::string labels;
  for (const std::string& name : inputs.class_names) labels += name + "\n";
  WriteFileAtomic(JoinPath(output, "labels.txt"), labels);

  std::string rejects = "path,reason\n";
  json splits = json::object();
  json shards = json::array();
  uint64_t written = 0, rejected = 0, restart_markers_added = 0;
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
  }
  if (written + rejected != inputs.images.size()) {
    throw Error(output + ": written (" + std::to_string(written) + ") + rejected (" +
                std::to_string(rejected) + ") != inputs (" +
                std::to_string(inputs.images.size()) + ")");
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
               {"inputs", inputs.images.size()},
               {"written", written},
               {"rejected", rejected},
               {"classes", inputs.class_names},
               {"splits", splits},
               {"shards", shards},
               {"options", plan_doc}};
  if (plan_doc.contains("jpeg_restart_interval")) {
    dataset["restart_markers_added"] = restart_markers_added;
  }
  WriteFileAtomic(JoinPath(output, "rejects.csv"), rejects);
  WriteFileAtomic(JoinPath(output, "dataset.json"), dataset.dump(2) + "\n");
}

// Throws Error, naming the command-line option, for the bad options RunConvert lists.
void CheckOptions(const ConvertOptions& options) {
  if (options.num_workers < 1 || options.worker < 0 || options.worker >= options.num_workers) {
    throw Error("--worker must be in [0, --num-workers)");
  }
  if (options.output.empty()) throw Error("--output is required");
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

}  // namespace

ConvertSummary RunConvert(const ConvertOptions& options, const ConvertProgressCallback& progress) {
  auto start = std::chrono::steady_clock::now();
  CheckOptions(options);
  const int threads = options.threads > 0 ? options.threads : AvailableCpus();
  ThreadPool pool(threads);

  // 1. Inputs, their sizes, and the plan.
  InputList inputs = ListInputs(options.input);
  std::vector<uint64_t> sizes(inputs.images.size(), 0);
  ParallelFor(pool, inputs.images.size(), [&](size_t i) {
    try {
      sizes[i] = FileSize(inputs.images[i].path);
    } catch (const Error&) {
      // Unreadable inputs are rejected with their reason when converted.
    }
  });
  ConvertPlan plan = MakeConvertPlan(inputs, sizes, options.plan);
  json plan_doc = PlanDocument(options, inputs, sizes, plan);
  MakeDirectories(JoinPath(options.output, kStateFolder));
  CheckOrWritePlan(options.output, plan_doc);

  // 2. This worker's shards: keep finished ones when resuming, clear leftovers of others.
  ConvertSummary summary;
  std::vector<const PlannedShard*> todo;
  std::vector<std::string> names = ListDirectory(options.output);
  std::vector<std::string> state_names = ListDirectory(JoinPath(options.output, kStateFolder));
  RemoveDeadSummaryTemporaries(options.output, names, state_names);
  for (size_t i = 0; i < plan.shards.size(); ++i) {
    if (!ShardBelongsToWorker(i, options.worker, options.num_workers)) continue;
    const PlannedShard& shard = plan.shards[i];
    if (options.resume && LoadFinishedPart(options.output, shard)) {
      ++summary.shards_resumed;
      continue;
    }
    RemoveTemporaries(options.output, names, state_names, shard);
    RemoveFile(PartPath(options.output, shard));
    todo.push_back(&shard);
  }

  // 3. Convert: images are read, checked and encoded on the pool, up to `ahead` images
  //    in flight, and written in plan order by this thread.
  ConvertProgress state;
  for (const PlannedShard* shard : todo) {
    state.total += shard->inputs.size();
    state.bytes_total += shard->input_bytes;
  }
  std::vector<std::pair<const PlannedShard*, size_t>> items;  // shard, position in it
  for (const PlannedShard* shard : todo) {
    for (size_t k = 0; k < shard->inputs.size(); ++k) items.emplace_back(shard, k);
  }
  const size_t ahead = static_cast<size_t>(threads) * 16;
  std::deque<std::future<ItemResult>> in_flight;
  // The tasks refer to `inputs`, which goes away before the pool's threads do: when
  // writing fails (e.g. on a full disk), wait for the tasks still in flight first.
  struct WaitForTasks {
    std::deque<std::future<ItemResult>>& tasks;
    ~WaitForTasks() {
      for (std::future<ItemResult>& task : tasks) task.wait();
    }
  } wait_for_tasks{in_flight};
  size_t submitted = 0;
  auto submit_up_to = [&](size_t limit) {
    for (; submitted < std::min(limit, items.size()); ++submitted) {
      const InputImage& input = inputs.images[items[submitted].first->inputs[items[submitted].second]];
      in_flight.push_back(pool.Submit([&input, &inputs, &options] {
        ItemResult result;
        try {
          result.example = MakeImageExample(input, inputs.class_names[input.label], options.image);
        } catch (const std::exception& e) {
          result.reject_reason = RejectReason(e, input.path);
          if (result.reject_reason.empty()) result.reject_reason = "unknown error";
        }
        return result;
      }));
    }
  };

  for (const PlannedShard* shard : todo) {
    std::string shard_path = JoinPath(options.output, shard->file_name);
    ShardPart part;
    std::vector<IndexEntry> index;
    {
      AtomicFileWriter file(shard_path, options.shard_opener);
      TfRecordWriter writer(file.file());
      for (size_t k = 0; k < shard->inputs.size(); ++k) {
        submit_up_to(submitted + ahead - in_flight.size());
        ItemResult result = in_flight.front().get();
        in_flight.pop_front();
        const InputImage& input = inputs.images[shard->inputs[k]];
        if (result.reject_reason.empty()) {
          index.push_back(writer.Write(result.example.record));
          ++part.records;
          part.restart_markers_added += result.example.restart_markers_added;
          ++part.per_class[input.label];
        } else {
          part.rejects.emplace_back(input.path, result.reject_reason);
        }
        ++state.done;
        state.bytes_done += sizes[shard->inputs[k]];
        if (progress) progress(state);
      }
      writer.Close();
      part.bytes = writer.bytes_written();
      // The shard takes its final name last, so that a .tfrecord in the output always
      // has its index and part file, even when a write fails (e.g. a full disk).
      WriteIndexFile(IndexPathFor(shard_path), index);
      WriteFileAtomic(PartPath(options.output, *shard), part.ToJson(*shard).dump(1) + "\n");
      file.Commit();
    }
    ++summary.shards_this_run;
    summary.input_bytes_this_run += shard->input_bytes;
  }

  // 4. Gather every finished shard (any worker's); finish the data set when all are in.
  std::vector<ShardPart> parts;
  for (const PlannedShard& shard : plan.shards) {
    std::optional<ShardPart> part = LoadFinishedPart(options.output, shard);
    if (!part) continue;
    ++summary.shards_done;
    summary.written += part->records;
    summary.rejected += part->rejects.size();
    summary.restart_markers_added += part->restart_markers_added;
    summary.output_bytes += part->bytes;
    summary.shards.push_back({shard.file_name, shard.split, part->records, part->bytes});
    parts.push_back(std::move(*part));
  }
  summary.inputs = inputs.images.size();
  summary.shards_total = plan.shards.size();
  summary.complete = summary.shards_done == summary.shards_total;
  if (summary.complete) WriteDatasetFiles(options.output, inputs, plan, parts, plan_doc);
  summary.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace imgpipe
