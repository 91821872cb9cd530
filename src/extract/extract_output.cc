#include "extract/extract_output.h"

#include <signal.h>

#include <cerrno>
#include <cstdio>

#include "extract/npy_file.h"
#include "record/crc32c_file.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::extract {
namespace {

using nlohmann::json;

constexpr char kStateFolder[] = ".imgpipe-extract";

// "PREFIX-NNNNN" + suffix, NNNNN the shard number (5 digits or more).
std::string NumberedName(const char* prefix, size_t shard, const char* suffix) {
  char name[64];
  std::snprintf(name, sizeof(name), "%s-%05zu%s", prefix, shard, suffix);
  return name;
}

// `name` in the state folder of output folder `dir`.
std::string StatePath(const std::string& dir, const std::string& name) {
  return JoinPath(JoinPath(dir, kStateFolder), name);
}

// The record of a finished shard: .imgpipe-extract/shard-NNNNN.json.
std::string ShardRecordPath(const std::string& dir, size_t shard) {
  return StatePath(dir, NumberedName("shard", shard, ".json"));
}

// The pid in "<file_name>.<pid>.tmp" (an AtomicFileWriter temporary of `file_name`),
// or -1 when `name` is not one.
long TemporaryPid(const std::string& name, const std::string& file_name) {
  const size_t suffix = kTemporarySuffix.size();
  if (name.size() <= file_name.size() + 1 + suffix || name.rfind(file_name + ".", 0) != 0 ||
      name.compare(name.size() - suffix, suffix, kTemporarySuffix) != 0) {
    return -1;
  }
  std::string pid = name.substr(file_name.size() + 1, name.size() - file_name.size() - 1 - suffix);
  if (pid.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9) return -1;
  return std::stol(pid);
}

// Removes the temporaries of `file_name` in `folder`: all of them, or only those of
// processes that no longer run.
void RemoveTemporaries(const std::string& folder, const std::vector<std::string>& file_names,
                       bool only_of_dead_processes) {
  if (!IsDirectory(folder)) return;
  for (const std::string& name : ListDirectory(folder)) {
    for (const std::string& file_name : file_names) {
      long pid = TemporaryPid(name, file_name);
      if (pid < 0) continue;
      if (only_of_dead_processes && !(::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) {
        continue;
      }
      RemoveFile(JoinPath(folder, name));
    }
  }
}

// A failure as shard records and features.json hold it, and back.
json FailureJson(const RowFailure& f) {
  return {{"row", f.row}, {"file", f.file}, {"offset", f.offset}, {"id", f.id}, {"reason", f.reason}};
}

RowFailure FailureFromJson(const json& j) {
  return {j.at("row").get<uint64_t>(), j.at("file").get<std::string>(),
          j.at("offset").get<uint64_t>(), j.at("id").get<std::string>(),
          j.at("reason").get<std::string>()};
}

// One CSV line (RFC 4180): fields with a comma, quote or line break are quoted.
std::string CsvLine(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line += ',';
    const std::string& f = fields[i];
    bool quote = f.find_first_of(",\"\r\n") != std::string::npos;
    if (quote) line += '"';
    for (char c : f) line += c == '"' ? std::string("\"\"") : std::string(1, c);
    if (quote) line += '"';
  }
  return line + "\n";
}

// Whether the .npy file at `path` is there with dtype `descr` (a prefix, for '<U')
// and shape `shape`.
bool ArrayMatches(const std::string& path, const std::string& descr, bool descr_is_prefix,
                  const std::vector<uint64_t>& shape) {
  if (!PathExists(path)) return false;
  try {
    npy::ArrayInfo info = npy::ReadHeader(path);
    bool descr_ok = descr_is_prefix ? info.descr.rfind(descr, 0) == 0 : info.descr == descr;
    return descr_ok && info.shape == shape;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

std::string FeaturesFileName(size_t shard) { return NumberedName("features", shard, ".npy"); }
std::string IdsFileName(size_t shard) { return NumberedName("ids", shard, ".npy"); }
std::string LabelsFileName(size_t shard) { return NumberedName("labels", shard, ".npy"); }

std::vector<std::string> ShardFileNames(size_t shard) {
  return {FeaturesFileName(shard), IdsFileName(shard), LabelsFileName(shard)};
}

std::string NpyDtypeOf(const std::string& dtype) {
  if (dtype == "float32") return "<f4";
  if (dtype == "float16") return "<f2";
  throw Error("unknown feature dtype '" + dtype + "' (expected float32 or float16)");
}

ExtractOutput::ExtractOutput(std::string dir, json plan) : dir_(std::move(dir)), plan_(std::move(plan)) {}

ExtractOutput ExtractOutput::Open(const std::string& dir) {
  std::string path = StatePath(dir, "plan.json");
  json plan = json::parse(ReadFile(path), nullptr, false);
  if (plan.is_discarded() || !plan.contains("shards")) {
    throw DataError(path, std::nullopt, "not an imgpipe extract plan");
  }
  return ExtractOutput(dir, std::move(plan));
}

void ExtractOutput::CheckOrWritePlan() const {
  MakeDirectories(JoinPath(dir_, kStateFolder));
  RemoveTemporaries(JoinPath(dir_, kStateFolder), {"plan.json"}, true);
  RemoveTemporaries(dir_, {"features.json", "failures.csv"}, true);
  std::string path = StatePath(dir_, "plan.json");
  if (PathExists(path)) {
    json existing = json::parse(ReadFile(path), nullptr, false);
    if (existing != plan_) {
      throw Error(dir_ + ": holds an extraction with a different plan (other input, model, "
                  "layer or options; see " + path + "); use a new --out folder");
    }
    return;
  }
  WriteFileAtomic(path, plan_.dump(2) + "\n");
}

std::optional<ShardResult> ExtractOutput::LoadFinishedShard(size_t index) const {
  std::string record_path = ShardRecordPath(dir_, index);
  if (!PathExists(record_path)) return std::nullopt;
  json doc = json::parse(ReadFile(record_path), nullptr, false);
  const json& planned_input = plan_.at("shards").at(index);
  if (doc.is_discarded() || doc.value("input", json()) != planned_input) return std::nullopt;
  ShardResult result;
  result.index = index;
  try {
    result.rows = doc.at("rows").get<uint64_t>();
    result.seconds = doc.at("seconds").get<double>();
    result.input_wait_seconds = doc.at("input_wait_seconds").get<double>();
    for (const json& f : doc.at("failures")) result.failures.push_back(FailureFromJson(f));
  } catch (const json::exception&) {
    return std::nullopt;  // not a record this code wrote: redo the shard
  }
  if (planned_input.contains("images") && planned_input["images"][1].get<uint64_t>() != result.rows) {
    return std::nullopt;
  }
  const uint64_t dimension = plan_.at("dimension").get<uint64_t>();
  const std::string descr = NpyDtypeOf(plan_.at("dtype").get<std::string>());
  if (!ArrayMatches(JoinPath(dir_, FeaturesFileName(index)), descr, false, {result.rows, dimension}) ||
      !ArrayMatches(JoinPath(dir_, IdsFileName(index)), "<U", true, {result.rows}) ||
      !ArrayMatches(JoinPath(dir_, LabelsFileName(index)), "<i8", false, {result.rows})) {
    return std::nullopt;
  }
  return result;
}

void ExtractOutput::ClearShard(size_t index) const {
  RemoveFile(ShardRecordPath(dir_, index));
  RemoveTemporaries(JoinPath(dir_, kStateFolder), {NumberedName("shard", index, ".json")}, false);
  RemoveTemporaries(dir_, ShardFileNames(index), false);
}

void ExtractOutput::WriteShard(const ShardResult& result, const ShardArrays& arrays) const {
  const uint64_t dimension = plan_.at("dimension").get<uint64_t>();
  const std::string descr = NpyDtypeOf(plan_.at("dtype").get<std::string>());
  if (arrays.ids.size() != result.rows || arrays.labels.size() != result.rows ||
      arrays.features.size() != result.rows * dimension * npy::ItemBytes(descr)) {
    throw Error(dir_ + ": shard " + std::to_string(result.index) + ": arrays do not hold " +
                std::to_string(result.rows) + " rows");
  }
  // The arrays, and the CRC-32C of each as written (--finalize checks them).
  json checksums = json::object();
  checksums[FeaturesFileName(result.index)] =
      npy::WriteArray(JoinPath(dir_, FeaturesFileName(result.index)), descr,
                      {result.rows, dimension}, arrays.features);
  npy::UnicodeColumn ids = npy::EncodeUnicodeColumn(arrays.ids);
  checksums[IdsFileName(result.index)] =
      npy::WriteArray(JoinPath(dir_, IdsFileName(result.index)), ids.descr, {result.rows}, ids.data);
  checksums[LabelsFileName(result.index)] =
      npy::WriteArray(JoinPath(dir_, LabelsFileName(result.index)), "<i8", {result.rows},
                      std::string_view(reinterpret_cast<const char*>(arrays.labels.data()),
                                       arrays.labels.size() * sizeof(int64_t)));
  json failures = json::array();
  for (const RowFailure& f : result.failures) failures.push_back(FailureJson(f));
  json doc{{"shard", result.index},
           {"input", plan_.at("shards").at(result.index)},
           {"rows", result.rows},
           {"failures", failures},
           {"seconds", result.seconds},
           {"input_wait_seconds", result.input_wait_seconds},
           {"crc32c", checksums}};
  WriteFileAtomic(ShardRecordPath(dir_, result.index), doc.dump(2) + "\n");
}

std::string ExtractOutput::ShardProblem(size_t index) const {
  if (!LoadFinishedShard(index)) {
    return "not finished (no shard record, or its arrays disagree with it)";
  }
  json doc = json::parse(ReadFile(ShardRecordPath(dir_, index)), nullptr, false);
  // Records written before checksums were kept are checked by their arrays' headers.
  const json checksums = doc.value("crc32c", json::object());
  for (const std::string& name : ShardFileNames(index)) {
    if (!checksums.contains(name)) continue;
    std::string mismatch =
        Crc32cMismatch(FileCrc32c(JoinPath(dir_, name)), checksums.at(name).get<uint32_t>());
    if (!mismatch.empty()) return name + " changed since it was written: " + mismatch;
  }
  return "";
}

bool ExtractOutput::WriteSummaryIfComplete() const {
  std::vector<ShardResult> results;
  for (size_t i = 0; i < shard_count(); ++i) {
    std::optional<ShardResult> result = LoadFinishedShard(i);
    if (!result) return false;
    results.push_back(std::move(*result));
  }
  json shards = json::array();
  json failures = json::array();
  std::string csv = CsvLine({"shard", "row", "file", "offset", "id", "reason"});
  uint64_t count = 0;
  for (const ShardResult& r : results) {
    shards.push_back({{"features", FeaturesFileName(r.index)},
                      {"ids", IdsFileName(r.index)},
                      {"labels", LabelsFileName(r.index)},
                      {"rows", r.rows},
                      {"input", plan_.at("shards").at(r.index)}});
    for (const RowFailure& f : r.failures) {
      json item = FailureJson(f);
      item["shard"] = r.index;
      failures.push_back(item);
      csv += CsvLine({std::to_string(r.index), std::to_string(f.row), f.file,
                      std::to_string(f.offset), f.id, f.reason});
    }
    count += r.rows;
  }
  json summary{{"format", "imgpipe.features.v1"},
               {"model", plan_.at("model")},
               {"model_kind", plan_.at("model_kind")},
               {"layer", plan_.at("layer")},
               {"layer_resolved", plan_.at("layer_resolved")},
               {"dimension", plan_.at("dimension")},
               {"dtype", plan_.at("dtype")},
               {"npy_dtype", NpyDtypeOf(plan_.at("dtype").get<std::string>())},
               {"image_size", plan_.at("image_size")},
               {"data", plan_.at("data")},
               {"split", plan_.at("split")},
               {"input_kind", plan_.at("input_kind")},
               {"count", count},
               {"failure_count", failures.size()},
               {"shards", shards},
               {"failures", failures}};
  WriteFileAtomic(JoinPath(dir_, "failures.csv"), csv);
  WriteFileAtomic(JoinPath(dir_, "features.json"), summary.dump(2) + "\n");
  return true;
}

}  // namespace imgpipe::extract
