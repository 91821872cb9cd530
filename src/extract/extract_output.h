// The output folder of `imgpipe extract`, and the bookkeeping that makes a run
// resumable and shareable between worker processes:
//
//   features-NNNNN.npy   shard NNNNN's features: rows x dimension, '<f4' or '<f2'
//   ids-NNNNN.npy        its ids, '<UW' (fixed-width unicode): the record's
//                        image/filename, "TFRECORD_NAME:OFFSET" when it has none, or
//                        the image's name (its path relative to the image folder)
//   labels-NNNNN.npy     its labels, '<i8': image/class/label or the class folder's
//                        index; -1 when unknown
//   features.json        the summary (written once every shard is finished)
//   failures.csv         shard,row,file,offset,id,reason of every row left as zeros
//   .imgpipe-extract/plan.json         what the run was asked to do (checked on resume)
//   .imgpipe-extract/shard-NNNNN.json  a finished shard: rows, failures, timings, and
//                                      the CRC-32C of its three arrays
//
// Every file is written under a temporary name and renamed into place. A shard's
// three arrays are written first and its shard-NNNNN.json last: a shard counts as
// finished when that file is there, names the planned input, and the arrays' headers
// agree with it (row count, dtype, dimension).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace imgpipe::extract {

// A row whose record could not be read or decoded: written as zeros, listed here.
struct RowFailure {
  uint64_t row = 0;     // within its shard
  std::string file;     // the TFRecord file or image file
  uint64_t offset = 0;  // of the record in the TFRecord file (0 for image files)
  std::string id;
  std::string reason;
  bool operator==(const RowFailure&) const = default;
};

// A finished shard, as shard-NNNNN.json records it.
struct ShardResult {
  size_t index = 0;
  uint64_t rows = 0;
  std::vector<RowFailure> failures;
  double seconds = 0;             // wall time spent extracting it
  double input_wait_seconds = 0;  // of which the model waited for input
};

// The contents of one shard's arrays.
struct ShardArrays {
  std::string features;           // rows x dimension elements of the plan's dtype
  std::vector<std::string> ids;   // rows, UTF-8
  std::vector<int64_t> labels;    // rows
};

// "features-00042.npy" and so on.
std::string FeaturesFileName(size_t shard);
std::string IdsFileName(size_t shard);
std::string LabelsFileName(size_t shard);
// The three, in that order.
std::vector<std::string> ShardFileNames(size_t shard);

// The NumPy dtype of a --dtype name: "float32" -> "<f4", "float16" -> "<f2".
std::string NpyDtypeOf(const std::string& dtype);

class ExtractOutput {
 public:
  // `plan` is the run's plan document: at least "dtype" (float32 or float16),
  // "dimension" and "shards" (the ShardInputJson of each shard).
  ExtractOutput(std::string dir, nlohmann::json plan);
  // The output folder `dir` as an earlier run planned it (reads its plan.json).
  static ExtractOutput Open(const std::string& dir);

  const std::string& dir() const { return dir_; }
  const nlohmann::json& plan() const { return plan_; }
  size_t shard_count() const { return plan_.at("shards").size(); }

  // Creates the folder and records plan.json, or checks that the plan.json already
  // there is the same plan; throws Error naming the folder when it differs.
  void CheckOrWritePlan() const;
  // Shard `index`'s result when it is finished (see above); nullopt otherwise.
  std::optional<ShardResult> LoadFinishedShard(size_t index) const;
  // Removes shard `index`'s record and any temporaries a killed process left of it.
  void ClearShard(size_t index) const;
  // Writes the shard's arrays, then its record; throws Error when `arrays` does not
  // match `result` (row counts, feature bytes).
  void WriteShard(const ShardResult& result, const ShardArrays& arrays) const;
  // What is wrong with shard `index`: not finished, or one of its arrays' CRC-32C is
  // not the one its record holds (read from the files); empty when it checks out.
  std::string ShardProblem(size_t index) const;
  // When every shard is finished, writes features.json and failures.csv (the same
  // bytes whichever process does it) and returns true; otherwise writes nothing.
  bool WriteSummaryIfComplete() const;

 private:
  std::string dir_;
  nlohmann::json plan_;
};

}  // namespace imgpipe::extract
