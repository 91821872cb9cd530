#include "convert/converter.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "convert/convert_test_util.h"
#include "image/codec.h"
#include "image/image_test_util.h"
#include "image/jpeg_test_util.h"
#include "image/jpeg_transcode.h"
#include "image/presets.h"
#include "image/resize.h"
#include "record/example.h"
#include "record/image_feature_keys.h"
#include "record/index.h"
#include "record/tfrecord_reader.h"
#include "util/error.h"
#include "util/file.h"
#include "testing/unprivileged_test_util.h"

namespace imgpipe {
namespace {

std::string FreshDir(const std::string& name) {
  std::string dir = JoinPath(::testing::TempDir(),
                             "converter_test_" + std::to_string(::getpid()) + "_" + name);
  std::string command = "rm -rf '" + dir + "'";
  EXPECT_EQ(std::system(command.c_str()), 0);
  MakeDirectories(dir);
  return dir;
}

void Link(const std::string& target, const std::string& link) {
  MakeDirectories(DirName(link));
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0) << link;
}

// A folder-per-class input: the real photos, the mixed formats, and the bad images,
// linked (not copied) from the shared test data.
std::string MakeMixedInput() {
  std::string dir = FreshDir("input");
  std::string photos = kTestData + "/images/photos-by-class";
  for (const std::string& cls : ListDirectory(photos)) {
    if (!IsDirectory(photos + "/" + cls)) continue;
    for (const std::string& f : ListDirectory(photos + "/" + cls)) {
      Link(photos + "/" + cls + "/" + f, dir + "/photo_" + cls + "/" + f);
    }
  }
  std::string mixed = kTestData + "/images/mixed-formats";
  for (const std::string& sub : ListDirectory(mixed)) {
    if (!IsDirectory(mixed + "/" + sub)) continue;
    for (const std::string& f : ListDirectory(mixed + "/" + sub)) {
      Link(mixed + "/" + sub + "/" + f, dir + "/mixed/" + sub + "_" + f);
    }
  }
  Link(kTestData + "/bad-images", dir + "/bad/images");
  return dir;
}

struct ShardContents {
  std::vector<std::string> filenames;
  std::map<int64_t, int> labels;
};

ShardContents ReadShard(const std::string& path) {
  ShardContents out;
  TfRecordReader reader(path);
  std::string data;
  std::vector<IndexEntry> seen;
  while (reader.Next(&data)) {
    Example e = ParseExample(data, path, reader.record_offset());
    const Features& f = e.features();
    out.filenames.emplace_back(*GetBytesFeature(f, image_keys::kFilename));
    ++out.labels[*GetInt64Feature(f, image_keys::kLabel)];
    EXPECT_EQ(*GetBytesFeature(f, image_keys::kFormat), "JPEG");
    EXPECT_GT(*GetInt64Feature(f, image_keys::kHeight), 0);
    EXPECT_GT(*GetInt64Feature(f, image_keys::kWidth), 0);
    std::string_view jpeg = *GetBytesFeature(f, image_keys::kEncoded);
    EXPECT_EQ(jpeg.substr(0, 2), std::string_view("\xff\xd8", 2));
    seen.push_back({reader.record_offset(), data.size() + 16});
  }
  EXPECT_EQ(ReadIndexFile(IndexPathFor(path)), seen) << path;
  return out;
}

TEST(RunConvert, EveryInputWrittenOrRejectedWithAReason) {
  std::string input = MakeMixedInput();
  std::string output = FreshDir("out");
  ConvertOptions options;
  options.input = input;
  options.output = output;
  options.plan.splits = ParseSplits("train=0.75,validation=0.25");
  options.plan.shard_bytes = 100'000'000;  // so --min-shards decides
  options.plan.min_shards = 2;
  options.threads = 3;
  options.image.verify = VerifyMode::kDecode;
  ConvertSummary summary = RunConvert(options);

  InputList inputs = ListInputs(input);
  ASSERT_TRUE(summary.complete);
  EXPECT_EQ(summary.inputs, inputs.size());
  EXPECT_EQ(summary.written + summary.rejected, summary.inputs);
  EXPECT_GE(summary.written, 47u + 15u);  // photos and the JPEGs of every subsampling

  // Shards hold every written image once, with its class.
  std::set<std::string> written;
  for (const ShardSummary& s : summary.shards) {
    ShardContents c = ReadShard(JoinPath(output, s.file_name));
    EXPECT_EQ(c.filenames.size(), s.records);
    EXPECT_EQ(FileSize(JoinPath(output, s.file_name)), s.bytes);
    for (const std::string& f : c.filenames) EXPECT_TRUE(written.insert(f).second) << f;
  }
  EXPECT_EQ(written.size(), summary.written);

  // rejects.csv lists the rest, each with a reason; the bad images are among them.
  std::string rejects = ReadFile(JoinPath(output, "rejects.csv"));
  EXPECT_EQ(rejects.rfind("path,reason\n", 0), 0u);
  size_t lines = std::count(rejects.begin(), rejects.end(), '\n') - 1;
  EXPECT_EQ(lines, summary.rejected);
  for (const char* bad : {"monkey12.jpg", "cat-3449999_640_grayscale_16bit.jpg"}) {
    EXPECT_NE(rejects.find(bad), std::string::npos) << bad;
  }
  EXPECT_EQ(rejects.find(",\n"), std::string::npos) << "a reject without a reason";
  // Misnamed PNG/BMP/... files are re-encoded as JPEG, not rejected.
  EXPECT_TRUE(written.count("bad/images/misnamed/jpeg/0/png.jpeg"));

  auto dataset = nlohmann::json::parse(ReadFile(JoinPath(output, "dataset.json")));
  EXPECT_EQ(dataset["written"].get<uint64_t>(), summary.written);
  EXPECT_EQ(dataset["splits"]["train"]["shards"].get<int>(), 2);
  EXPECT_EQ(dataset["shards"].size(), summary.shards.size());
  std::string labels = ReadFile(JoinPath(output, "labels.txt"));
  EXPECT_EQ(static_cast<size_t>(std::count(labels.begin(), labels.end(), '\n')),
            inputs.class_names.size());
}

TEST(RunConvert, NonJpegRejectPolicy) {
  std::string input = FreshDir("nonjpeg");
  Link(kTestData + "/bad-images/misnamed/jpeg/0/png.jpeg", input + "/a/png.jpeg");
  Link(kTestData + "/images/photos-by-class/84", input + "/b");
  ConvertOptions options;
  options.input = input;
  options.output = FreshDir("nonjpeg_out");
  options.image.non_jpeg = NonJpegPolicy::kReject;
  ConvertSummary summary = RunConvert(options);
  EXPECT_EQ(summary.rejected, 1u);
  EXPECT_NE(ReadFile(options.output + "/rejects.csv").find("not a JPEG (png)"), std::string::npos);
}

TEST(RunConvert, ManifestWithMissingFileAndDirectory) {
  std::string dir = FreshDir("manifest");
  std::string photos = kTestData + "/images/photos-by-class";
  std::string cls = ListDirectory(photos)[0];
  std::string photo = photos + "/" + cls + "/" + ListDirectory(photos + "/" + cls)[0];
  std::string manifest = dir + "/list.csv";
  WriteFileAtomic(manifest, "path,label\n" + photo + ",cat\nmissing.jpg,dog\n" + photos + ",dog\n");
  ConvertOptions options;
  options.input = manifest;
  options.output = dir + "/out";
  ConvertSummary summary = RunConvert(options);
  EXPECT_EQ(summary.written, 1u);
  EXPECT_EQ(summary.rejected, 2u);
  std::string rejects = ReadFile(options.output + "/rejects.csv");
  EXPECT_NE(rejects.find(dir + "/missing.jpg,open: No such file or directory"), std::string::npos)
      << rejects;
  EXPECT_NE(rejects.find("Is a directory"), std::string::npos) << rejects;
}

TEST(RunConvert, ResumeKeepsFinishedShardsAndRefusesAnotherPlan) {
  std::string input = MakeMixedInput();
  ConvertOptions options;
  options.input = input;
  options.output = FreshDir("resume");
  options.plan.min_shards = 4;
  ConvertSummary first = RunConvert(options);
  ASSERT_TRUE(first.complete);
  EXPECT_EQ(first.shards_this_run, 4u);

  options.resume = true;
  ConvertSummary again = RunConvert(options);
  EXPECT_EQ(again.shards_this_run, 0u);
  EXPECT_EQ(again.shards_resumed, 4u);
  EXPECT_EQ(again.written, first.written);

  // A shard whose part file is gone is redone, identically.
  std::string shard = JoinPath(options.output, first.shards[1].file_name);
  std::string before = ReadFile(shard);
  RemoveFile(options.output + "/.imgpipe/" + first.shards[1].file_name + ".json");
  ConvertSummary redo = RunConvert(options);
  EXPECT_EQ(redo.shards_this_run, 1u);
  EXPECT_EQ(ReadFile(shard), before);

  options.plan.seed = 99;
  EXPECT_THROW(RunConvert(options), Error);
}

// Two workers convert their shards (round robin) into one folder; neither writes the
// summary files; the finalize step checks every shard and writes them. Shards and
// summary files are byte-identical to one process's.
TEST(RunConvert, WorkersSplitTheShardsAndTheFinalizeStepWritesTheSummary) {
  std::string input = MakeMixedInput();
  ConvertOptions options;
  options.input = input;
  options.plan.min_shards = 5;
  std::string single_dir = FreshDir("single");
  options.output = single_dir;
  ConvertSummary single = RunConvert(options);

  options.output = FreshDir("workers");
  options.num_workers = 2;
  options.worker = 1;
  ConvertSummary part = RunConvert(options);
  EXPECT_FALSE(part.complete);
  EXPECT_EQ(part.shards_this_run, 2u);  // shards 1 and 3 of 5
  options.worker = 0;
  ConvertSummary rest = RunConvert(options);
  EXPECT_FALSE(rest.complete);
  EXPECT_EQ(rest.shards_this_run, 3u);
  EXPECT_EQ(rest.shards_done, 5u);
  for (const char* name : {"dataset.json", "rejects.csv", "labels.txt"}) {
    EXPECT_FALSE(PathExists(JoinPath(options.output, name))) << name << " written by a worker";
  }

  options.finalize = true;
  ConvertSummary finalized = RunConvert(options);
  EXPECT_TRUE(finalized.complete);
  EXPECT_EQ(finalized.shards_done, 5u);
  EXPECT_EQ(finalized.written, single.written);
  EXPECT_EQ(finalized.rejected, single.rejected);
  for (const char* name : {"dataset.json", "rejects.csv", "labels.txt"}) {
    EXPECT_EQ(ReadFile(JoinPath(options.output, name)), ReadFile(JoinPath(single_dir, name)));
  }
  for (const ShardSummary& s : single.shards) {
    EXPECT_EQ(ReadFile(JoinPath(options.output, s.file_name)),
              ReadFile(JoinPath(single_dir, s.file_name)))
        << s.file_name;
  }
}

// Expects `options` (a finalize step) to throw an Error whose message holds each of
// `expected`, and no summary file to be written.
void ExpectFinalizeRefused(const ConvertOptions& options, const std::vector<std::string>& expected) {
  try {
    RunConvert(options);
    ADD_FAILURE() << "the finalize step passed";
  } catch (const Error& e) {
    for (const std::string& text : expected) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos)
          << "'" << text << "' not in: " << e.what();
    }
  }
  for (const char* name : {"dataset.json", "rejects.csv", "labels.txt"}) {
    EXPECT_FALSE(PathExists(JoinPath(options.output, name))) << name;
  }
}

// The finalize step writes nothing until every shard checks out: it names the missing
// shards and the workers to rerun, then a shard whose bytes changed after it was
// written (same size: only the CRC-32C tells) and its worker; rerunning that worker
// without its part file redoes the shard, and the finalize step then passes.
TEST(RunConvert, FinalizeNamesMissingAndChangedShardsAndTheirWorkers) {
  ConvertOptions options;
  options.input = kTestData + "/images/photos-by-class";
  options.plan.min_shards = 6;
  options.threads = 2;
  options.output = FreshDir("finalize_missing");
  options.num_workers = 3;
  options.finalize = true;
  ExpectFinalizeRefused(options, {"no conversion was begun there"});

  options.finalize = false;
  options.worker = 0;
  RunConvert(options);
  options.worker = 2;
  ConvertSummary two = RunConvert(options);
  ASSERT_EQ(two.shards_done, 4u);
  options.finalize = true;
  ExpectFinalizeRefused(options, {"2 of 6 shards do not check out",
                                  "train-00001-of-00006.tfrecord (worker 1): not finished",
                                  "train-00004-of-00006.tfrecord (worker 1): not finished",
                                  "rerun worker 1 of --num-workers 3"});
  // Another plan is refused as the workers refuse it.
  options.plan.min_shards = 7;
  ExpectFinalizeRefused(options, {"different plan", "min_shards (6 there, 7 now)"});
  options.plan.min_shards = 6;

  options.finalize = false;
  options.worker = 1;
  RunConvert(options);
  // One byte of shard 5's last record, flipped in place: size and counts still agree.
  const std::string shard5 = JoinPath(options.output, "train-00005-of-00006.tfrecord");
  std::string bytes = ReadFile(shard5);
  bytes[bytes.size() - 10] ^= 0x40;
  WriteFileAtomic(shard5, bytes);
  options.finalize = true;
  ExpectFinalizeRefused(options, {"1 of 6 shards do not check out",
                                  "train-00005-of-00006.tfrecord (worker 2): changed since it "
                                  "was written: CRC-32C",
                                  "rerun worker 2 of --num-workers 3"});

  // Worker 2 again, with --resume and shard 5's part file removed: only shard 5 is redone.
  RemoveFile(JoinPath(options.output, ".imgpipe/train-00005-of-00006.tfrecord.json"));
  options.finalize = false;
  options.worker = 2;
  options.resume = true;
  ConvertSummary redone = RunConvert(options);
  EXPECT_EQ(redone.shards_this_run, 1u);
  EXPECT_EQ(redone.shards_resumed, 1u);
  options.finalize = true;
  ConvertSummary finalized = RunConvert(options);
  EXPECT_TRUE(finalized.complete);
  EXPECT_EQ(finalized.written + finalized.rejected, finalized.inputs);
  EXPECT_TRUE(PathExists(JoinPath(options.output, "dataset.json")));

}

// Every record of a finished conversion's shards, parsed.
std::vector<Example> ReadAllRecords(const std::string& output, const ConvertSummary& summary) {
  std::vector<Example> out;
  for (const ShardSummary& s : summary.shards) {
    std::string path = JoinPath(output, s.file_name);
    TfRecordReader reader(path);
    std::string data;
    while (reader.Next(&data)) out.push_back(ParseExample(data, path, reader.record_offset()));
  }
  return out;
}

int64_t Int64Of(const Example& e, const char* key) {
  std::optional<int64_t> v = GetInt64Feature(e.features(), key);
  EXPECT_TRUE(v.has_value()) << key;
  return v.value_or(-1);
}

// Checks one record of a --max-resolution conversion against its input file: stored as
// it is within the limit; else resized (antialiased, = Pillow) to the limit on its
// longer side and re-encoded. Returns whether it was resized.
bool CheckMaxResolutionRecord(const Example& e, const std::string& input_path, int limit) {
  std::string original = ReadFile(input_path);
  DecodeOptions gray_or_rgb;
  gray_or_rgb.channels = ReadImageInfo(original, input_path).channels == 1 ? 1 : 3;
  Image decoded = DecodeImage(original, input_path, gray_or_rgb);  // EXIF orientation applied
  std::string_view stored = *GetBytesFeature(e.features(), image_keys::kEncoded);
  ImageInfo stored_info = ReadImageInfo(stored, "stored");
  EXPECT_EQ(Int64Of(e, image_keys::kHeight), stored_info.height) << input_path;
  EXPECT_EQ(Int64Of(e, image_keys::kWidth), stored_info.width) << input_path;
  if (std::max(decoded.width, decoded.height) <= limit) {
    EXPECT_TRUE(stored == original) << input_path << ": not stored byte for byte";
    ImageInfo info = ReadImageInfo(original, input_path);
    EXPECT_EQ(Int64Of(e, image_keys::kOriginalHeight), info.height) << input_path;
    EXPECT_EQ(Int64Of(e, image_keys::kOriginalWidth), info.width) << input_path;
    return false;
  }
  EXPECT_EQ(stored_info.orientation, 1) << input_path;
  EXPECT_EQ(std::max(stored_info.width, stored_info.height), limit) << input_path;
  EXPECT_EQ(Int64Of(e, image_keys::kOriginalHeight), decoded.height) << input_path;
  EXPECT_EQ(Int64Of(e, image_keys::kOriginalWidth), decoded.width) << input_path;
  // The same aspect ratio, within the rounding of the shorter side.
  double expected_width = static_cast<double>(decoded.width) * limit /
                          std::max(decoded.width, decoded.height);
  EXPECT_LE(std::abs(stored_info.width - expected_width), 0.5 + 1e-9) << input_path;
  // The bytes: the antialiased resize of the whole input, encoded at the default
  // quality; decoded, close to the resize (4:2:0 chroma costs up to 3.5 on these photos).
  Image resized = Resize(decoded, stored_info.width, stored_info.height);
  EXPECT_TRUE(stored == EncodeJpeg(resized, ImageExampleOptions().jpeg_quality)) << input_path;
  EXPECT_LT(MeanAbsDiff(DecodeImage(stored, "stored"), resized), 4.0) << input_path;
  return true;
}

// photos-by-class (640 to 1920 px wide) at --max-resolution 640: the 640 px photos are
// kept byte for byte, the larger ones resized; --verify decode passes.
TEST(RunConvert, MaxResolutionResizesLargerPhotosAndKeepsSmallerOnes) {
  const int limit = 640;
  ConvertOptions options;
  options.input = kTestData + "/images/photos-by-class";
  options.output = FreshDir("max_resolution");
  options.plan.min_shards = 3;
  options.image.verify = VerifyMode::kDecode;
  options.image.max_resolution = limit;
  options.image.jpeg_restart_interval = 0;  // stored bytes are compared: JPEGs as given
  ConvertSummary summary = RunConvert(options);
  ASSERT_TRUE(summary.complete);
  EXPECT_EQ(summary.rejected, 0u);
  std::vector<Example> records = ReadAllRecords(options.output, summary);
  ASSERT_EQ(records.size(), summary.written);
  int resized = 0;
  for (const Example& e : records) {
    std::string name(*GetBytesFeature(e.features(), image_keys::kFilename));
    resized += CheckMaxResolutionRecord(e, JoinPath(options.input, name), limit);
  }
  EXPECT_GT(resized, 0);
  EXPECT_LT(resized, static_cast<int>(records.size()));
  auto dataset = nlohmann::json::parse(ReadFile(JoinPath(options.output, "dataset.json")));
  EXPECT_EQ(dataset["options"]["max_resolution"], limit);
  EXPECT_NE(dataset["example_keys"].dump().find(image_keys::kOriginalWidth), std::string::npos);
}

// A photo given EXIF orientation 6 (turn 90 degrees) at test time: resized as displayed
// (the stored JPEG has no orientation, its size is the turned one); a small one with
// orientation 6 is kept as it is, orientation included.
TEST(RunConvert, MaxResolutionAppliesExifOrientationFirst) {
  std::string input = FreshDir("orientation_in");
  std::string photos = kTestData + "/images/photos-by-class";
  std::string large, small;
  for (const std::string& cls : ListDirectory(photos)) {
    if (!IsDirectory(JoinPath(photos, cls))) continue;
    for (const std::string& f : ListDirectory(JoinPath(photos, cls))) {
      std::string path = JoinPath(JoinPath(photos, cls), f);
      ImageInfo info = ReadImageInfo(ReadFile(path), path);
      if (info.width > info.height && info.width > 1000 && large.empty()) large = path;
      if (std::max(info.width, info.height) <= 640 && small.empty()) small = path;
    }
  }
  ASSERT_FALSE(large.empty() || small.empty());
  MakeDirectories(input + "/a");
  WriteFileAtomic(input + "/a/large.jpg", WithExifOrientation(ReadFile(large), 6));
  WriteFileAtomic(input + "/a/small.jpg", WithExifOrientation(ReadFile(small), 6));
  ConvertOptions options;
  options.input = input;
  options.output = FreshDir("orientation_out");
  options.image.max_resolution = 640;
  options.image.jpeg_restart_interval = 0;  // stored bytes are compared: JPEGs as given
  ConvertSummary summary = RunConvert(options);
  ASSERT_EQ(summary.written, 2u);
  int resized = 0;
  for (const Example& e : ReadAllRecords(options.output, summary)) {
    std::string name(*GetBytesFeature(e.features(), image_keys::kFilename));
    resized += CheckMaxResolutionRecord(e, JoinPath(input, name), 640);
    if (name == "a/large.jpg") {
      EXPECT_GT(Int64Of(e, image_keys::kHeight), Int64Of(e, image_keys::kWidth)) << "not turned";
    } else {
      EXPECT_EQ(ReadImageInfo(*GetBytesFeature(e.features(), image_keys::kEncoded), name).orientation, 6);
    }
  }
  EXPECT_EQ(resized, 1);
}

// Expects RunConvert(options) to throw an Error whose message contains `expected`.
void ExpectRefused(const ConvertOptions& options, const std::string& expected) {
  try {
    RunConvert(options);
    ADD_FAILURE() << "not refused: " << expected;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

// Worker 0 of 2 converts its shards of photos-by-class (4 shards) into a fresh folder
// `name` with `image`; returns the options for worker 1.
ConvertOptions HalfDoneConversion(const std::string& name, const ImageExampleOptions& image) {
  ConvertOptions options;
  options.input = kTestData + "/images/photos-by-class";
  options.output = FreshDir(name);
  options.plan.min_shards = 4;
  options.image = image;
  options.num_workers = 2;
  options.worker = 0;
  EXPECT_FALSE(RunConvert(options).complete);
  options.worker = 1;
  return options;
}

// Runs the worker `options` names, then the finalize step; returns the latter's summary.
ConvertSummary RunWorkerAndFinalize(ConvertOptions options) {
  ConvertSummary worker = RunConvert(options);
  EXPECT_FALSE(worker.complete) << "one of several workers wrote the summary files";
  EXPECT_EQ(worker.shards_done, worker.shards_total);
  options.finalize = true;
  return RunConvert(options);
}

// --max-resolution is part of the plan: workers and resumed runs must agree on it, and a
// run that does not is refused naming the option and both values.
TEST(RunConvert, ResumeWithAnotherMaxResolutionIsRefusedWithTheReason) {
  ImageExampleOptions image;
  image.max_resolution = 512;
  ConvertOptions options = HalfDoneConversion("max_resolution_resume", image);
  auto refused_with = [&](const std::string& expected) { ExpectRefused(options, expected); };
  options.image.max_resolution = 256;
  refused_with("max_resolution (512 there, 256 now)");
  options.image.max_resolution = 0;
  refused_with("max_resolution (512 there, unset now)");
  options.resume = true;
  refused_with("max_resolution (512 there, unset now)");
  options.image.max_resolution = 512;
  ConvertSummary rest = RunWorkerAndFinalize(options);
  EXPECT_TRUE(rest.complete);
  EXPECT_EQ(rest.rejected, 0u);
  for (const Example& e : ReadAllRecords(options.output, rest)) {
    EXPECT_LE(std::max(Int64Of(e, image_keys::kHeight), Int64Of(e, image_keys::kWidth)), 512);
  }
}

// A folder-per-class input for --jpeg-restart-interval: the photos (640 to 1920 px),
// the JPEGs of every chroma subsampling and the PNGs, linked from the shared test data.
std::string MakeRestartInput() {
  std::string dir = FreshDir("restart_in");
  const std::string images = kTestData + "/images";
  std::vector<std::string> folders = {images + "/mixed-formats/0", images + "/mixed-formats/2"};
  for (const std::string& cls : ListDirectory(images + "/photos-by-class")) {
    folders.push_back(images + "/photos-by-class/" + cls);
  }
  for (const std::string& folder : folders) {
    if (!IsDirectory(folder)) continue;
    const std::string cls = BaseName(DirName(folder)) + "_" + BaseName(folder);
    for (const std::string& f : ListDirectory(folder)) {
      if (f != "image_list.txt") Link(JoinPath(folder, f), JoinPath(JoinPath(dir, cls), f));
    }
  }
  return dir;
}

// Checks the train preset (three seeds) and the eval preset give the same output on
// both encodings of one image.
void ExpectSamePresetOutputs(std::string_view plain, std::string_view marked, const std::string& name) {
  const TrainPreset train;
  const EvalPreset eval;
  std::vector<uint8_t> a(OutputBytes(train.layout, train.size)), b(a.size());
  for (uint64_t seed : {1, 2, 3}) {
    ApplyTrainPreset(plain, name, train, seed, a.data());
    ApplyTrainPreset(marked, name, train, seed, b.data());
    EXPECT_TRUE(a == b) << name << ": train preset, seed " << seed;
  }
  a.assign(OutputBytes(eval.layout, eval.crop_size), 0);
  b.assign(a.size(), 1);
  ApplyEvalPreset(plain, name, eval, a.data());
  ApplyEvalPreset(marked, name, eval, b.data());
  EXPECT_TRUE(a == b) << name << ": eval preset";
}

// --jpeg-restart-interval 1, against the same conversion without it (both at
// --max-resolution 640, so that JPEGs kept as they are, resized JPEGs and re-encoded PNGs
// are all there): every stored JPEG has a restart marker every MCU and decodes to
// exactly the same pixels (so, for a JPEG kept as it is, the input file's); the other
// features are the same; the train and eval presets give the same outputs; the summary
// and dataset.json count the rewritten JPEGs.
TEST(RunConvert, JpegRestartIntervalKeepsEveryPixelAndMarksEveryJpeg) {
  ConvertOptions options;
  options.input = MakeRestartInput();
  options.plan.min_shards = 2;
  options.image.max_resolution = 640;
  const std::string plain_output = FreshDir("restart_plain");
  options.output = plain_output;
  options.image.jpeg_restart_interval = 0;
  ConvertSummary plain = RunConvert(options);
  options.image.jpeg_restart_interval = 1;
  options.output = FreshDir("restart_marked");
  ConvertSummary marked = RunConvert(options);
  ASSERT_TRUE(marked.complete);
  EXPECT_EQ(marked.rejected, 0u);
  EXPECT_EQ(plain.restart_markers_added, 0u);
  EXPECT_EQ(marked.restart_markers_added, marked.written);  // none is CMYK or had markers
  std::vector<Example> before = ReadAllRecords(plain_output, plain);
  std::vector<Example> after = ReadAllRecords(options.output, marked);
  ASSERT_EQ(after.size(), before.size());
  int kept_as_is = 0;
  for (size_t i = 0; i < after.size(); ++i) {
    const Example& b = before[i];
    const Example& a = after[i];
    const std::string name(*GetBytesFeature(a.features(), image_keys::kFilename));
    const std::string plain_jpeg(*GetBytesFeature(b.features(), image_keys::kEncoded));
    const std::string marked_jpeg(*GetBytesFeature(a.features(), image_keys::kEncoded));
    EXPECT_EQ(JpegLayoutOf(marked_jpeg).restart_interval, 1) << name;
    EXPECT_EQ(MaxAbsDiff(DecodeImage(marked_jpeg, name), DecodeImage(plain_jpeg, name)), 0) << name;
    kept_as_is += plain_jpeg == ReadFile(JoinPath(options.input, name));
    ExpectSamePresetOutputs(plain_jpeg, marked_jpeg, name);
    ASSERT_EQ(a.features().feature().size(), b.features().feature().size()) << name;
    for (const auto& [key, feature] : b.features().feature()) {
      if (key == image_keys::kEncoded) continue;
      EXPECT_EQ(a.features().feature().at(key).SerializeAsString(), feature.SerializeAsString())
          << name << ": " << key;
    }
  }
  EXPECT_GE(kept_as_is, 10);  // the photos within 640 px: their own pixels
  auto dataset = nlohmann::json::parse(ReadFile(JoinPath(options.output, "dataset.json")));
  EXPECT_EQ(dataset["options"]["jpeg_restart_interval"], 1);
  EXPECT_EQ(dataset["restart_markers_added"], marked.written);
}

// A camera JPEG with bytes before its DQT and before EOI (libjpeg's "extraneous bytes
// before marker" warnings) converts under --verify decode, plain and with
// --jpeg-restart-interval 1, and its stored image decodes to the input's pixels.
TEST(RunConvert, JpegsWithWarningsConvert) {
  std::string dir = FreshDir("warning_jpegs");
  std::string jpeg = ReadFile(kTestData + "/images/hymenoptera/val/bees/10870992_eebeeb3a12.jpg");
  jpeg.insert(jpeg.find(std::string("\xFF\xDB", 2)), std::string("\0\0", 2));
  jpeg.insert(jpeg.size() - 2, std::string(40, '\x5A'));
  MakeDirectories(dir + "/in/bees");
  WriteFileAtomic(dir + "/in/bees/padded.jpg", jpeg);
  const Image want = DecodeImage(jpeg, "padded.jpg");
  for (int interval : {0, 1}) {
    SCOPED_TRACE("--jpeg-restart-interval " + std::to_string(interval));
    ConvertOptions options;
    options.input = dir + "/in";
    options.output = dir + "/out" + std::to_string(interval);
    options.image.jpeg_restart_interval = interval;
    ConvertSummary summary = RunConvert(options);
    ASSERT_TRUE(summary.complete);
    ASSERT_EQ(summary.written, 1u);
    std::vector<Example> records = ReadAllRecords(options.output, summary);
    ASSERT_EQ(records.size(), 1u);
    const std::string stored(*GetBytesFeature(records[0].features(), image_keys::kEncoded));
    EXPECT_EQ(MaxAbsDiff(DecodeImage(stored, "stored"), want), 0);
    if (interval == 1) {
      EXPECT_EQ(JpegLayoutOf(stored).restart_interval, 1);
    }
  }
}

// A JPEG that decodes but whose restart-marker rewrite fails is stored as given and
// counted, beside a photo that gets its markers (issue 44: nothing lost).
TEST(RunConvert, JpegWhoseRewriteFailsIsStoredAsGivenAndCounted) {
  const std::string dir = FreshDir("rewrite_fails");
  const std::vector<unsigned char> gray(64 * 24, 120);
  const std::string odd = WithDcPastBaselineRange(TurboEncode(gray, 64, 24, TJPF_GRAY, TJSAMP_GRAY, 0));
  MakeDirectories(dir + "/in/a");
  WriteFileAtomic(dir + "/in/a/odd.jpg", odd);
  Link(kTestData + "/images/hymenoptera/val/bees/10870992_eebeeb3a12.jpg", dir + "/in/a/bee.jpg");
  ConvertOptions options;
  options.input = dir + "/in";
  options.output = dir + "/out";
  options.image.jpeg_restart_interval = 1;
  ConvertSummary summary = RunConvert(options);
  ASSERT_TRUE(summary.complete);
  EXPECT_EQ(summary.written, 2u);
  EXPECT_EQ(summary.rejected, 0u);
  EXPECT_EQ(summary.restart_markers_added, 1u);
  const std::string reason = "cannot rewrite the JPEG: DCT coefficient out of range";
  EXPECT_EQ(summary.restart_failures, (std::map<std::string, uint64_t>{{reason, 1}}));
  EXPECT_EQ(DescribeRestartMarkers(summary, 1),
            "restart markers (every 1 MCUs) added to 1 of 2 JPEGs; 1 stored as given: " + reason + " (1)");
  for (const Example& e : ReadAllRecords(options.output, summary)) {
    const std::string name(*GetBytesFeature(e.features(), image_keys::kFilename));
    const std::string stored(*GetBytesFeature(e.features(), image_keys::kEncoded));
    if (name == "a/odd.jpg") {
      EXPECT_EQ(stored, odd);
    } else {
      EXPECT_EQ(JpegLayoutOf(stored).restart_interval, 1) << name;
    }
  }
  auto dataset = nlohmann::json::parse(ReadFile(JoinPath(options.output, "dataset.json")));
  EXPECT_EQ(dataset["restart_markers_added"], 1);
  EXPECT_EQ(dataset["restart_failures"], nlohmann::json::array({{dir + "/in/a/odd.jpg", reason}}));
  // A resumed run of the finished conversion counts the same from the part files.
  options.resume = true;
  EXPECT_EQ(RunConvert(options).restart_failures, summary.restart_failures);
}

// --jpeg-restart-interval is part of the plan, only when set: workers and resumed runs
// must agree on it; a conversion begun without it resumes without it.
TEST(RunConvert, ResumeWithAnotherJpegRestartIntervalIsRefusedWithTheReason) {
  ImageExampleOptions image;
  image.jpeg_restart_interval = 1;
  ConvertOptions options = HalfDoneConversion("restart_resume", image);
  auto refused_with = [&](const std::string& expected) { ExpectRefused(options, expected); };
  options.image.jpeg_restart_interval = 8;
  refused_with("jpeg_restart_interval (1 there, 8 now)");
  options.image.jpeg_restart_interval = 0;
  options.resume = true;
  refused_with("jpeg_restart_interval (1 there, unset now)");
  options.image.jpeg_restart_interval = 1;
  ConvertSummary rest = RunWorkerAndFinalize(options);
  EXPECT_TRUE(rest.complete);
  EXPECT_EQ(rest.restart_markers_added, rest.written);

  // Begun without markers: resumes without them, refuses them.
  ImageExampleOptions unset;
  unset.jpeg_restart_interval = 0;
  options = HalfDoneConversion("restart_resume_unset", unset);
  options.resume = true;
  EXPECT_EQ(ReadFile(JoinPath(options.output, ".imgpipe/plan.json")).find("jpeg_restart"),
            std::string::npos);
  options.image.jpeg_restart_interval = 1;
  refused_with("jpeg_restart_interval (unset there, 1 now)");
  options.image.jpeg_restart_interval = 0;
  EXPECT_TRUE(RunWorkerAndFinalize(options).complete);
}

TEST(RunConvert, JpegRestartIntervalOutsideItsRangeIsRefused) {
  ConvertOptions options;
  options.input = kTestData + "/images/photos-by-class";
  options.output = FreshDir("restart_range");
  for (int interval : {-1, kMaxJpegRestartInterval + 1}) {
    options.image.jpeg_restart_interval = interval;
    ExpectRefused(options, "--jpeg-restart-interval must be in [0, 65535]");
  }
}

TEST(StoredSize, CapsTheLongerSideAndRoundsTheShorter) {
  EXPECT_EQ(StoredSize(1920, 1080, 0), (ImageSize{1920, 1080}));
  EXPECT_EQ(StoredSize(640, 427, 640), (ImageSize{640, 427}));
  EXPECT_EQ(StoredSize(1280, 853, 640), (ImageSize{640, 427}));   // 426.5 rounds up
  EXPECT_EQ(StoredSize(853, 1280, 256), (ImageSize{171, 256}));   // 170.6
  EXPECT_EQ(StoredSize(5000, 3, 256), (ImageSize{256, 1}));       // at least 1 pixel
  EXPECT_EQ(StoredSize(300, 300, 256), (ImageSize{256, 256}));
}

// Damaged inputs through a manifest, converted by an unprivileged process (so that the
// unreadable file is unreadable when the test runs as root): each is rejected with its
// path and a reason, and written + rejected = inputs.
TEST(RunConvert, DamagedAndUnreadableInputsAreRejectedWithReasons) {
  std::string dir = FreshDir("damaged");
  MakeWritableByAnyone(dir);
  std::string photos = kTestData + "/images/photos-by-class";
  std::string cls = ListDirectory(photos)[0];
  std::string photo = photos + "/" + cls + "/" + ListDirectory(photos + "/" + cls)[0];
  std::string bytes = ReadFile(photo);
  WriteFileAtomic(dir + "/empty.jpg", "");
  WriteFileAtomic(dir + "/truncated.jpg", bytes.substr(0, bytes.size() / 2));
  WriteFileAtomic(dir + "/unreadable.jpg", bytes);
  MakeUnreadable(dir + "/unreadable.jpg");
  MakeDirectories(dir + "/folder.jpg");
  WriteFileAtomic(dir + "/list.csv", "path,label\n" + photo +
                                         ",a\nempty.jpg,a\ntruncated.jpg,b\nunreadable.jpg,b\n"
                                         "folder.jpg,b\n");
  UnprivilegedResult r = RunUnprivileged([&](std::string* message) {
    ConvertOptions options;
    options.input = dir + "/list.csv";
    options.output = dir + "/out";  // --verify decode, the default
    ConvertSummary summary = RunConvert(options);
    *message = std::to_string(summary.written) + "+" + std::to_string(summary.rejected);
    return summary.complete ? 0 : 1;
  });
  ASSERT_EQ(r.status, 0) << r.message;
  EXPECT_EQ(r.message, "1+4");
  std::string rejects = ReadFile(dir + "/out/rejects.csv");
  for (const std::string& line :
       {dir + "/unreadable.jpg,open: Permission denied\n", dir + "/folder.jpg,open: Is a directory\n",
        dir + "/empty.jpg,", dir + "/truncated.jpg,"}) {
    EXPECT_NE(rejects.find(line), std::string::npos) << line << " not in\n" << rejects;
  }
  EXPECT_EQ(rejects.find(",\n"), std::string::npos) << "a reject without a reason";
  EXPECT_NE(rejects.find("truncated.jpg,truncated JPEG data"), std::string::npos) << rejects;
  EXPECT_NE(rejects.find("empty.jpg,empty file"), std::string::npos) << rejects;
}

// --verify decode is the default: a JPEG cut in half (its header intact) is rejected,
// so no shard holds an image the pipeline cannot decode; --verify header lets it in.
TEST(RunConvert, RestartMarkersAreTheDefault) {
  EXPECT_EQ(ConvertOptions{}.image.jpeg_restart_interval, 1);
  ConvertOptions options;
  options.input = kTestData + "/images/hymenoptera/val";
  options.output = FreshDir("restart_default");
  ConvertSummary summary = RunConvert(options);
  ASSERT_TRUE(summary.complete);
  EXPECT_GT(summary.written, 100u);
  EXPECT_EQ(summary.restart_markers_added, summary.written);
}

TEST(RunConvert, VerifyDecodeIsTheDefault) {
  std::string dir = FreshDir("verify-default");
  std::string photos = kTestData + "/images/hymenoptera/val/ants";
  std::string photo = photos + "/" + ListDirectory(photos)[0];
  MakeDirectories(dir + "/in/ants");
  WriteFileAtomic(dir + "/in/ants/whole.jpg", ReadFile(photo));
  const std::string bytes = ReadFile(photo);
  WriteFileAtomic(dir + "/in/ants/truncated.jpg", bytes.substr(0, bytes.size() / 2));
  EXPECT_EQ(ConvertOptions{}.image.verify, VerifyMode::kDecode);
  for (VerifyMode mode : {ConvertOptions{}.image.verify, VerifyMode::kHeader}) {
    SCOPED_TRACE(VerifyModeName(mode));
    ConvertOptions options;
    options.input = dir + "/in";
    options.output = dir + "/out-" + VerifyModeName(mode);
    options.image.verify = mode;
    // Restart markers (the default) decode every JPEG, whatever --verify says.
    options.image.jpeg_restart_interval = 0;
    ConvertSummary summary = RunConvert(options);
    ASSERT_TRUE(summary.complete);
    EXPECT_EQ(summary.written, mode == VerifyMode::kDecode ? 1u : 2u);
    EXPECT_EQ(summary.rejected, mode == VerifyMode::kDecode ? 1u : 0u);
  }
}

// Every .tfrecord in `output` is complete: readable to its end, its index matching and
// its part file in .imgpipe/ agreeing on the record count. Returns how many there are.
size_t CheckEveryShardIsComplete(const std::string& output) {
  size_t shards = 0;
  for (const std::string& name : ListDirectory(output)) {
    EXPECT_EQ(name.find(kTemporarySuffix), std::string::npos) << "leftover " << name;
    if (name.size() < 9 || name.substr(name.size() - 9) != ".tfrecord") continue;
    ++shards;
    ShardContents contents = ReadShard(JoinPath(output, name));  // checks the index too
    auto part = nlohmann::json::parse(ReadFile(output + "/.imgpipe/" + name + ".json"));
    EXPECT_EQ(part["records"].get<size_t>(), contents.filenames.size()) << name;
    EXPECT_EQ(part["bytes"].get<uint64_t>(), FileSize(JoinPath(output, name))) << name;
  }
  for (const std::string& name : ListDirectory(output + "/.imgpipe")) {
    EXPECT_EQ(name.find(kTemporarySuffix), std::string::npos) << "leftover .imgpipe/" << name;
  }
  return shards;
}

// The disk fills while the third shard is written: an IoError naming the shard's file
// and ENOSPC, the two finished shards complete, no partial file under a final name, and
// --resume (with space again) finishes byte-identical to an uninterrupted run.
TEST(RunConvert, DiskFullFailsCleanlyAndResumes) {
  ConvertOptions options;
  options.input = kTestData + "/images/photos-by-class";
  options.plan.min_shards = 5;
  options.threads = 2;
  std::string reference_dir = FreshDir("disk_full_reference");
  options.output = reference_dir;
  ConvertSummary reference = RunConvert(options);
  ASSERT_EQ(reference.shards.size(), 5u);

  options.output = FreshDir("disk_full");
  options.shard_opener = &OpenDiskFullFile;
  disk_bytes_left = static_cast<int64_t>(reference.shards[0].bytes + reference.shards[1].bytes +
                                         reference.shards[2].bytes / 2);
  try {
    RunConvert(options);
    FAIL() << "no error on a full disk";
  } catch (const IoError& e) {
    EXPECT_EQ(e.error_number(), ENOSPC);
    std::string shard = JoinPath(options.output, reference.shards[2].file_name);
    EXPECT_EQ(std::string(e.what()).rfind(shard + ".", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find(": write: No space left on device"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(CheckEveryShardIsComplete(options.output), 2u);
  EXPECT_FALSE(PathExists(options.output + "/dataset.json"));

  options.shard_opener = nullptr;
  options.resume = true;
  ConvertSummary resumed = RunConvert(options);
  EXPECT_TRUE(resumed.complete);
  EXPECT_EQ(resumed.shards_resumed, 2u);
  EXPECT_EQ(resumed.written + resumed.rejected, resumed.inputs);
  std::vector<std::string> names = {"dataset.json", "rejects.csv", "labels.txt"};
  for (const ShardSummary& s : reference.shards) names.push_back(s.file_name);
  for (const std::string& name : names) {
    EXPECT_TRUE(ReadFile(JoinPath(options.output, name)) == ReadFile(JoinPath(reference_dir, name)))
        << name;
  }
}

}  // namespace
}  // namespace imgpipe
