#include "extract/feature_extractor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "extract/checkpoint_test_util.h"
#include "extract/extract_output.h"
#include "extract/extract_test_util.h"
#include "extract/npy_file.h"
#include "image/presets.h"
#include "record/example.h"
#include "record/image_feature_keys.h"
#include "record/tfrecord_reader.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::extract {
namespace {

using nlohmann::json;

constexpr int kImageSize = 64;

// 3 TFRecord shards of 18 synthetic JPEGs (imgpipe convert), the second one followed by
// a record whose image does not decode ("bad/record.jpg", label 1): 19 records.
const std::string& TestShards() {
  static const std::string dir = [] {
    std::string root = FreshTestDir("shards");
    MakeSynthImages(JoinPath(root, "images"), 3, 6, 80, 64);
    ConvertToShards(JoinPath(root, "images"), JoinPath(root, "shards"), 3);
    AppendUndecodableRecord(JoinPath(root, "shards/train-00001-of-00003.tfrecord"), "bad/record.jpg", 1);
    return JoinPath(root, "shards");
  }();
  return dir;
}

const std::string& TestCheckpoint() {
  static const std::string path = [] {
    std::string p = JoinPath(FreshTestDir("checkpoint"), "small-resnet.ckpt");
    WriteTestCheckpoint(p, "small-resnet", {"a", "b", "c"}, 32);
    return p;
  }();
  return path;
}

// What every row should be: the records of `files` in order, with their ids, labels
// and eval-preset pixels (zeros for a record that does not decode).
struct ExpectedRows {
  std::vector<std::string> ids;
  std::vector<int64_t> labels;
  std::vector<bool> decodes;
  std::vector<float> pixels;  // rows x 3 x size x size
  std::vector<uint64_t> offsets;
};

ExpectedRows ReadExpectedRows(const std::vector<std::string>& files, int size) {
  ExpectedRows rows;
  EvalPreset preset;
  preset.crop_size = size;
  preset.resize_size = size * 256 / 224;
  const size_t floats = 3 * size * size;
  for (const std::string& file : files) {
    TfRecordReader reader(file);
    std::string data;
    while (reader.Next(&data)) {
      Example example = ParseExample(data, file, reader.record_offset());
      rows.ids.emplace_back(*GetBytesFeature(example.features(), image_keys::kFilename));
      rows.labels.push_back(*GetInt64Feature(example.features(), image_keys::kLabel));
      rows.offsets.push_back(reader.record_offset());
      rows.pixels.resize(rows.pixels.size() + floats);
      try {
        ApplyEvalPreset(*GetBytesFeature(example.features(), image_keys::kEncoded), file, preset,
                        rows.pixels.data() + rows.pixels.size() - floats);
        rows.decodes.push_back(true);
      } catch (const DataError&) {
        rows.decodes.push_back(false);
      }
    }
  }
  return rows;
}

std::vector<std::string> ShardFiles(const std::string& dir) {
  std::vector<std::string> files;
  for (const std::string& name : ListDirectory(dir)) {
    if (name.size() > 9 && name.substr(name.size() - 9) == ".tfrecord") files.push_back(JoinPath(dir, name));
  }
  return files;
}

// All rows of an output folder, in shard order, with ids and labels.
struct OutputRows {
  std::vector<float> features;
  uint64_t rows = 0, columns = 0;
  std::vector<std::string> ids;
  std::vector<int64_t> labels;
};

OutputRows ReadOutputRows(const std::string& dir) {
  json summary = json::parse(ReadFile(JoinPath(dir, "features.json")));
  OutputRows out;
  for (const json& shard : summary["shards"]) {
    uint64_t rows = 0;
    std::vector<float> f = ReadFeatureRows(JoinPath(dir, shard["features"].get<std::string>()), &rows, &out.columns);
    EXPECT_EQ(rows, shard["rows"].get<uint64_t>());
    out.features.insert(out.features.end(), f.begin(), f.end());
    out.rows += rows;
    std::string ids_path = JoinPath(dir, shard["ids"].get<std::string>());
    npy::ArrayInfo ids = npy::ReadHeader(ids_path);
    for (std::string& id : npy::DecodeUnicodeColumn(ids.descr, ReadFile(ids_path).substr(ids.data_offset))) {
      out.ids.push_back(std::move(id));
    }
    std::string labels_path = JoinPath(dir, shard["labels"].get<std::string>());
    npy::ArrayInfo labels = npy::ReadHeader(labels_path);
    EXPECT_EQ(labels.descr, "<i8");
    std::string bytes = ReadFile(labels_path).substr(labels.data_offset);
    for (size_t i = 0; i < bytes.size(); i += 8) {
      int64_t v;
      std::memcpy(&v, bytes.data() + i, 8);
      out.labels.push_back(v);
    }
  }
  return out;
}

ExtractOptions TfRecordOptions(const std::string& model, const std::string& out) {
  ExtractOptions o;
  o.data = TestShards();
  o.model = model;
  o.output = out;
  o.image_size = kImageSize;
  o.batch_size = 4;
  return o;
}

TEST(RunExtract, TorchScriptFeaturesMatchPythonAndEveryRecordHasItsRow) {
  if (!PythonHasTorch()) GTEST_SKIP() << "/usr/bin/python3 has no torch/torchvision";
  std::string out = FreshTestDir("extract_torchscript");
  ExtractSummary summary = RunExtract(TfRecordOptions(TorchScriptResnet18(true), out));
  ASSERT_TRUE(summary.complete);
  EXPECT_EQ(summary.dimension, 512);
  EXPECT_EQ(summary.shards_total, 3u);
  EXPECT_EQ(summary.shards_this_run, 3u);
  EXPECT_EQ(summary.rows_total, 19u);
  EXPECT_EQ(summary.failures_total, 1u);
  EXPECT_GT(summary.images_per_s, 0);
  EXPECT_GE(summary.input_wait_fraction, 0);
  EXPECT_LE(summary.input_wait_fraction, 1);

  // 1. One row per record, in file order, with the record's filename and label.
  ExpectedRows expected = ReadExpectedRows(ShardFiles(TestShards()), kImageSize);
  ASSERT_EQ(expected.ids.size(), 19u);
  OutputRows rows = ReadOutputRows(out);
  ASSERT_EQ(rows.rows, 19u);
  EXPECT_EQ(rows.columns, 512u);
  EXPECT_EQ(rows.ids, expected.ids);
  EXPECT_EQ(rows.labels, expected.labels);

  // 2. The undecodable record: a zero row, listed with file, offset and reason.
  json doc = json::parse(ReadFile(JoinPath(out, "features.json")));
  EXPECT_EQ(doc["count"], 19);
  EXPECT_EQ(doc["layer_resolved"], "input of fc (Linear)");
  ASSERT_EQ(doc["failures"].size(), 1u);
  const json& failure = doc["failures"][0];
  const size_t bad = 6 + 6;  // shard 0 and 1 hold 6 images each, then the bad record
  EXPECT_FALSE(expected.decodes[bad]);
  EXPECT_EQ(failure["shard"], 1);
  EXPECT_EQ(failure["row"], 6);
  EXPECT_EQ(failure["file"], JoinPath(TestShards(), "train-00001-of-00003.tfrecord"));
  EXPECT_EQ(failure["offset"], expected.offsets[bad]);
  EXPECT_EQ(failure["id"], "bad/record.jpg");
  EXPECT_FALSE(failure["reason"].get<std::string>().empty());
  std::string csv = ReadFile(JoinPath(out, "failures.csv"));
  EXPECT_NE(csv.find("1,6," + failure["file"].get<std::string>() + "," +
                     std::to_string(expected.offsets[bad]) + ",bad/record.jpg,"),
            std::string::npos) << csv;
  for (uint64_t c = 0; c < rows.columns; ++c) EXPECT_EQ(rows.features[bad * rows.columns + c], 0.0f);

  // 3. Python: NumPy loads the shards unchanged, and torchvision's resnet18 (same seed)
  //    cut with Sequential(children[:-1]) + flatten gives the same features for the same
  //    preprocessed images: |a - b| < 1e-4 * max(1, |b|).
  std::string images = JoinPath(FreshTestDir("extract_torchscript_images"), "images.npy");
  std::vector<float>& pixels = expected.pixels;
  npy::WriteArray(images, "<f4", {19, 3, kImageSize, kImageSize},
                  std::string_view(reinterpret_cast<const char*>(pixels.data()), pixels.size() * 4));
  std::string verdict = RunPython(
      "import json, sys, numpy as np, torch, torchvision\n"
      "out, images = sys.argv[1], np.load(sys.argv[2])\n"
      "doc = json.load(open(out + '/features.json'))\n"
      "feats = np.concatenate([np.load(out + '/' + s['features'], allow_pickle=False) for s in doc['shards']])\n"
      "ids = np.concatenate([np.load(out + '/' + s['ids'], allow_pickle=False) for s in doc['shards']])\n"
      "labels = np.concatenate([np.load(out + '/' + s['labels'], allow_pickle=False) for s in doc['shards']])\n"
      "assert feats.dtype == np.float32 and feats.shape == (doc['count'], doc['dimension']), feats.shape\n"
      "assert ids.dtype.kind == 'U' and labels.dtype == np.int64 and len(ids) == len(labels) == doc['count']\n"
      "bad = [f['row'] + sum(s['rows'] for s in doc['shards'][:f['shard']]) for f in doc['failures']]\n"
      "assert ids[bad[0]] == 'bad/record.jpg' and not feats[bad].any()\n"
      "good = [i for i in range(len(feats)) if i not in bad]\n"
      "torch.manual_seed(7)\n"
      "m = torchvision.models.resnet18(weights=None, num_classes=10).eval()\n"
      "trunk = torch.nn.Sequential(*list(m.children())[:-1])\n"
      "with torch.no_grad():\n"
      "  ref = torch.flatten(trunk(torch.from_numpy(images[good])), 1).numpy()\n"
      "diff = np.abs(feats[good] - ref) / np.maximum(1, np.abs(ref))\n"
      "print('ok' if diff.max() < 1e-4 else 'max relative difference %g' % diff.max(), len(good), float(np.abs(ref).max()) > 0)\n",
      {out, images});
  EXPECT_EQ(verdict, "ok 18 True\n");
}

TEST(RunExtract, Float16RowsAreTheFloat32RowsRounded) {
  if (!PythonHasTorch()) GTEST_SKIP() << "/usr/bin/python3 has no torch/torchvision";
  std::string out32 = FreshTestDir("extract_fp32");
  std::string out16 = FreshTestDir("extract_fp16");
  RunExtract(TfRecordOptions(TorchScriptResnet18(false), out32));
  ExtractOptions half = TfRecordOptions(TorchScriptResnet18(false), out16);
  half.dtype = "float16";
  ASSERT_TRUE(RunExtract(half).complete);
  EXPECT_EQ(npy::ReadHeader(JoinPath(out16, FeaturesFileName(0))).descr, "<f2");
  EXPECT_EQ(json::parse(ReadFile(JoinPath(out16, "features.json")))["npy_dtype"], "<f2");
  OutputRows f32 = ReadOutputRows(out32);
  OutputRows f16 = ReadOutputRows(out16);
  ASSERT_EQ(f16.features.size(), f32.features.size());
  ASSERT_EQ(f16.rows, 19u);
  size_t nonzero = 0;
  for (size_t i = 0; i < f32.features.size(); ++i) {
    // Half precision: 11 significant bits, relative rounding error <= 2^-11.
    ASSERT_LE(std::fabs(f16.features[i] - f32.features[i]), 4.9e-4 * std::fabs(f32.features[i]) + 1e-7)
        << "element " << i;
    nonzero += f16.features[i] != 0;
  }
  EXPECT_GT(nonzero, f16.features.size() / 2);
  EXPECT_EQ(f16.ids, f32.ids);
}

TEST(RunExtract, CheckpointOnAnImageFolderWithABadFile) {
  std::string root = FreshTestDir("extract_folder");
  std::string images = JoinPath(root, "images");
  MakeSynthImages(images, 2, 5, 40, 40);
  WriteFileAtomic(JoinPath(images, "class_001/broken.jpg"), "not a JPEG at all");
  std::string checkpoint = JoinPath(root, "model.ckpt");
  const int64_t feature_dim = WriteTestCheckpoint(checkpoint, "small-resnet", {"x", "y"}, 32);
  ExtractOptions o;
  o.data = images;
  o.model = checkpoint;
  o.output = JoinPath(root, "out");
  o.shard_rows = 4;
  o.batch_size = 3;
  ExtractSummary summary = RunExtract(o);
  ASSERT_TRUE(summary.complete);
  EXPECT_EQ(summary.dimension, feature_dim);
  EXPECT_EQ(summary.shards_total, 3u);  // 11 images in groups of 4
  EXPECT_EQ(summary.rows_total, 11u);
  json doc = json::parse(ReadFile(JoinPath(o.output, "features.json")));
  EXPECT_EQ(doc["image_size"], 32);  // the checkpoint's
  EXPECT_EQ(doc["model_kind"], "checkpoint");
  EXPECT_EQ(doc["input_kind"], "images");
  EXPECT_EQ(doc["dimension"], feature_dim);
  OutputRows rows = ReadOutputRows(o.output);
  ASSERT_EQ(rows.ids.size(), 11u);
  EXPECT_EQ(rows.ids[0], "class_000/img_000000.jpg");
  EXPECT_EQ(rows.ids[5], "class_001/broken.jpg");  // sorted by name
  EXPECT_EQ(rows.ids[6], "class_001/img_000000.jpg");
  EXPECT_EQ(rows.labels, (std::vector<int64_t>{0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}));
  ASSERT_EQ(doc["failures"].size(), 1u);
  EXPECT_EQ(doc["failures"][0]["shard"], 1);
  EXPECT_EQ(doc["failures"][0]["row"], 1);
  EXPECT_EQ(doc["failures"][0]["file"], JoinPath(images, "class_001/broken.jpg"));
  for (uint64_t r = 0; r < rows.rows; ++r) {
    size_t nonzero = 0;
    for (uint64_t c = 0; c < rows.columns; ++c) nonzero += rows.features[r * rows.columns + c] != 0;
    if (r == 5) {
      EXPECT_EQ(nonzero, 0u);  // broken.jpg
    } else {
      EXPECT_GT(nonzero, 0u) << "row " << r;
    }
  }
}

TEST(RunExtract, ResumeRedoesOnlyTheMissingShardByteForByte) {
  std::string out = FreshTestDir("extract_resume");
  ExtractOptions o = TfRecordOptions(TestCheckpoint(), out);
  ASSERT_TRUE(RunExtract(o).complete);
  auto reference = OutputFiles(out);
  ASSERT_EQ(reference.size(), 11u);  // 3 x 3 arrays, features.json, failures.csv

  RemoveFile(JoinPath(out, FeaturesFileName(1)));
  RemoveFile(JoinPath(out, "features.json"));
  WriteFileAtomic(JoinPath(out, IdsFileName(1) + ".4000000.tmp"), "a killed run's leftover");
  o.resume = true;
  ExtractSummary resumed = RunExtract(o);
  EXPECT_TRUE(resumed.complete);
  EXPECT_EQ(resumed.shards_this_run, 1u);
  EXPECT_EQ(resumed.shards_resumed, 2u);
  EXPECT_EQ(resumed.rows_this_run, 7u);  // shard 1: 6 images and the bad record
  EXPECT_EQ(resumed.rows_total, 19u);
  EXPECT_EQ(OutputFiles(out), reference);

  // Without --resume every shard is redone, with the same bytes.
  o.resume = false;
  EXPECT_EQ(RunExtract(o).shards_this_run, 3u);
  EXPECT_EQ(OutputFiles(out), reference);
}

TEST(RunExtract, TwoWorkersWriteWhatOneWorkerWrites) {
  std::string single = FreshTestDir("extract_one_worker");
  ASSERT_TRUE(RunExtract(TfRecordOptions(TestCheckpoint(), single)).complete);
  std::string shared = FreshTestDir("extract_two_workers");
  ExtractOptions o = TfRecordOptions(TestCheckpoint(), shared);
  o.num_workers = 2;
  o.worker = 1;
  ExtractSummary part = RunExtract(o);
  EXPECT_FALSE(part.complete);
  EXPECT_EQ(part.shards_this_run, 1u);  // shard 1 of 0..2
  EXPECT_FALSE(PathExists(JoinPath(shared, "features.json")));
  // Before worker 0 ran, the finalize step names the shards it misses and their worker.
  try {
    FinalizeExtract(o);
    FAIL() << "finalized an extraction with missing shards";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("worker 0"), std::string::npos) << e.what();
  }
  o.worker = 0;
  ExtractSummary rest = RunExtract(o);
  EXPECT_FALSE(rest.complete);  // workers never write the summary: the finalize step does
  EXPECT_EQ(rest.shards_this_run, 2u);
  EXPECT_FALSE(PathExists(JoinPath(shared, "features.json")));
  ExtractSummary final_summary = FinalizeExtract(o);
  EXPECT_TRUE(final_summary.complete);
  EXPECT_EQ(final_summary.shards_done, 3u);
  EXPECT_EQ(OutputFiles(shared), OutputFiles(single));
  o.worker = 2;
  EXPECT_THROW(RunExtract(o), Error);
}

TEST(FinalizeExtract, AChangedArrayIsNamedAndNothingIsSummarized) {
  std::string out = FreshTestDir("extract_finalize_changed");
  ExtractOptions o = TfRecordOptions(TestCheckpoint(), out);
  o.num_workers = 2;
  for (o.worker = 0; o.worker < 2; ++o.worker) RunExtract(o);
  std::string features = JoinPath(out, FeaturesFileName(1));
  std::string bytes = ReadFile(features);
  bytes[bytes.size() - 1] ^= 0x01;  // one bit of the last row: the recorded CRC-32C differs
  WriteFileAtomic(features, bytes);
  try {
    FinalizeExtract(o);
    FAIL() << "finalized a changed features array";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(FeaturesFileName(1)), std::string::npos) << e.what();
  }
  EXPECT_FALSE(PathExists(JoinPath(out, "features.json")));
  o.layer = "logits";  // another plan than the workers'
  EXPECT_THROW(FinalizeExtract(o), Error);
}

TEST(RunExtract, AnotherPlanInTheSameFolderIsRefused) {
  std::string out = FreshTestDir("extract_other_plan");
  ExtractOptions o = TfRecordOptions(TestCheckpoint(), out);
  RunExtract(o);
  o.layer = "logits";
  o.resume = true;
  try {
    RunExtract(o);
    FAIL() << "a different plan was mixed into the folder";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("different plan"), std::string::npos);
  }
  o.layer = "penultimate";
  o.dtype = "float64";
  EXPECT_THROW(RunExtract(o), Error);
  o.dtype = ExtractOptions{}.dtype;
  o.draft_decode = true;  // other pixels: features of both kinds must not mix
  EXPECT_THROW(RunExtract(o), Error);
  o.draft_decode = false;
  EXPECT_TRUE(RunExtract(o).complete);  // the first run's plan again
}

TEST(RunExtract, CorruptTfRecordFramingStopsWithFileAndOffset) {
  std::string root = FreshTestDir("extract_corrupt");
  std::string shards = JoinPath(root, "shards");
  MakeDirectories(shards);
  std::string source = JoinPath(TestShards(), "train-00000-of-00003.tfrecord");
  std::string bytes = ReadFile(source);
  bytes[bytes.size() / 2] ^= 0x40;  // inside some record's data: its CRC no longer matches
  WriteFileAtomic(JoinPath(shards, "train-00000-of-00001.tfrecord"), bytes);
  ExtractOptions o = TfRecordOptions(TestCheckpoint(), JoinPath(root, "out"));
  o.data = shards;
  try {
    RunExtract(o);
    FAIL() << "a corrupt TFRecord was read without an error";
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), JoinPath(shards, "train-00000-of-00001.tfrecord"));
    EXPECT_TRUE(e.offset().has_value());
  }
  EXPECT_FALSE(PathExists(JoinPath(JoinPath(root, "out"), FeaturesFileName(0))));
}

}  // namespace
}  // namespace imgpipe::extract
