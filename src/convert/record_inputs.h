// TFRecord data as the input of a conversion (`imgpipe convert --input SHARDS`): the
// records of every file that pipeline::ResolveDataSource finds (imgpipe's, TF-slim's,
// TFDS's or plain tf.train.Example shards), re-sharded split by split, each record's
// image stored as an image input's is (--max-resolution, restart markers, checks) and
// its other features kept.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "convert/convert_plan.h"
#include "convert/image_example.h"
#include "pipeline/data_source.h"
#include "pipeline/input_list.h"
#include "util/thread_pool.h"

namespace imgpipe {

struct RecordInputs {
  pipeline::DataSource source;   // the files, the schema, the class names
  std::vector<uint32_t> file;    // input i's file: source.files[file[i]]
  std::vector<uint64_t> offset;  // where input i's record starts in it
  std::vector<size_t> split_begin;  // inputs of split k: [split_begin[k], split_begin[k+1])
  std::vector<std::string> split_names;  // split k's name (a file without one: "train")

  bool empty() const { return file.empty(); }
};

// Whether `input` is TFRecord data: a TFRecord file or glob pattern, or a folder that
// holds TFRecord files (an image folder and a .csv/.jsonl/.json manifest are not).
// Throws Error for an existing file that is none of these.
bool IsRecordInput(const std::string& input);

// Resolves `input`, lists every record of every file (from its .idx file, else by a
// scan of its framing, on `pool`), files split by split. Fills `list` with one entry per
// record, named "FILE@OFFSET" (FILE: its name in the input folder; the file's path when
// `input` is a file or a pattern), label 0 (a record's
// class is read when it is converted) and the data set's class names, and `sizes` with
// each record's size. Throws Error for compressed or unlabelled data.
RecordInputs ListRecordInputs(const std::string& input, ThreadPool& pool, InputList* list,
                              std::vector<uint64_t>* sizes);

// The plan for record inputs: each split of the source its own output split, shuffled
// with `options.seed` and cut into shards as MakeConvertPlan does. `options.splits`
// must be the default (one split "train"): the source's splits are kept.
ConvertPlan MakeRecordConvertPlan(const RecordInputs& records, const std::vector<uint64_t>& sizes,
                                  const PlanOptions& options);

// Record `i` re-made: read (both CRCs checked), its image stored as StoreImage does,
// imgpipe's image features set (label: the class index the schema maps the stored
// label to; class text from the class names when known), the image feature of another
// key removed, image/filename set to `name` when the record has none, and every other
// feature kept. *label receives the class index. Throws as MakeImageExample (DataError
// for a corrupt record or image).
ImageExample MakeRecordExample(const RecordInputs& records, size_t i, const std::string& name,
                               const std::vector<std::string>& class_names,
                               const ImageExampleOptions& options, int* label);

}  // namespace imgpipe
