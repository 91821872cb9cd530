#include "convert/synth_dataset.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "image/codec.h"
#include "image/image_test_util.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

// A fresh folder under the test temp dir, removed with the object.
class TempDir {
 public:
  TempDir() {
    std::string pattern = testing::TempDir() + "synth_test_XXXXXX";
    EXPECT_NE(mkdtemp(pattern.data()), nullptr);
    path_ = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Mean R, G, B of an image.
std::array<double, 3> MeanColour(const Image& image) {
  std::array<double, 3> sum{};
  for (size_t i = 0; i < image.pixels.size(); ++i) sum[i % 3] += image.pixels[i];
  double n = image.pixels.size() / 3.0;
  return {sum[0] / n, sum[1] / n, sum[2] / n};
}

TEST(SynthDatasetTest, ImagesAreDeterministicAndSized) {
  Image a = MakeSynthImage(3, 10, 7, 61, 33, 42);
  EXPECT_EQ(a.width, 61);
  EXPECT_EQ(a.height, 33);
  EXPECT_EQ(a.channels, 3);
  ASSERT_EQ(a.pixels.size(), 61u * 33 * 3);
  EXPECT_EQ(MakeSynthImage(3, 10, 7, 61, 33, 42).pixels, a.pixels);
  // Every argument matters.
  EXPECT_NE(MakeSynthImage(3, 10, 8, 61, 33, 42).pixels, a.pixels);
  EXPECT_NE(MakeSynthImage(4, 10, 7, 61, 33, 42).pixels, a.pixels);
  EXPECT_NE(MakeSynthImage(3, 11, 7, 61, 33, 42).pixels, a.pixels);
  EXPECT_NE(MakeSynthImage(3, 10, 7, 61, 33, 43).pixels, a.pixels);
}

// A fixed image has a fixed digest, recorded when the generator was written: data sets
// made on another machine or by another build are the same files. The generator uses
// no libm transcendental functions, so this holds across standard libraries; a
// deliberate change of the generator changes this digest.
TEST(SynthDatasetTest, ImagesAreStableAcrossBuilds) {
  Image image = MakeSynthImage(2, 5, 1, 32, 24, 7);
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (uint8_t v : image.pixels) hash = (hash ^ v) * 1099511628211ull;
  EXPECT_EQ(hash, 0x3e7e7999ea4e41c9ull) << std::hex << hash;
}

TEST(SynthDatasetTest, ImagesOfAClassVary) {
  for (int class_id = 0; class_id < 4; ++class_id) {  // one of each pattern
    Image a = MakeSynthImage(class_id, 4, 0, 64, 64, 0);
    Image b = MakeSynthImage(class_id, 4, 1, 64, 64, 0);
    EXPECT_GT(MeanAbsDiff(a, b), 10.0) << class_id;
  }
}

// Classes are told apart by a trivial classifier (nearest mean chromaticity), so a CNN
// can learn them.
TEST(SynthDatasetTest, ClassesAreSeparable) {
  const int classes = 10, train = 8, test = 8;
  auto chroma = [](const Image& image) {
    std::array<double, 3> m = MeanColour(image);
    double s = m[0] + m[1] + m[2] + 1e-9;
    return std::array<double, 2>{m[0] / s, m[1] / s};
  };
  std::vector<std::array<double, 2>> centroid(classes, {0, 0});
  for (int c = 0; c < classes; ++c) {
    for (int i = 0; i < train; ++i) {
      auto x = chroma(MakeSynthImage(c, classes, i, 48, 48, 5));
      centroid[c][0] += x[0] / train;
      centroid[c][1] += x[1] / train;
    }
  }
  EXPECT_GT(std::abs(centroid[0][0] - centroid[1][0]) + std::abs(centroid[0][1] - centroid[1][1]),
            0.02);
  int correct = 0;
  for (int c = 0; c < classes; ++c) {
    for (int i = train; i < train + test; ++i) {
      auto x = chroma(MakeSynthImage(c, classes, i, 48, 48, 5));
      int best = 0;
      double best_distance = 1e9;
      for (int k = 0; k < classes; ++k) {
        double d = std::hypot(x[0] - centroid[k][0], x[1] - centroid[k][1]);
        if (d < best_distance) best_distance = d, best = k;
      }
      correct += best == c;
    }
  }
  EXPECT_GE(correct, classes * test * 9 / 10);
}

TEST(SynthDatasetTest, NamesArePadded) {
  EXPECT_EQ(SynthClassFolderName(7, 10), "class_007");
  EXPECT_EQ(SynthClassFolderName(999, 1000), "class_999");
  EXPECT_EQ(SynthClassFolderName(42, 1001), "class_0042");
  EXPECT_EQ(SynthImageFileName(42, 100), "img_000042.jpg");
  EXPECT_EQ(SynthImageFileName(42, 2000000), "img_0000042.jpg");
}

// All files of a data set, relative path -> bytes.
std::vector<std::pair<std::string, std::string>> ReadTree(const std::string& root) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const std::string& folder : ListDirectory(root)) {
    for (const std::string& name : ListDirectory(JoinPath(root, folder))) {
      files.emplace_back(folder + "/" + name, ReadFile(JoinPath(JoinPath(root, folder), name)));
    }
  }
  return files;
}

TEST(SynthDatasetTest, WritesTheSameBytesWithAnyThreadCount) {
  TempDir one, three;
  SynthOptions options;
  options.classes = 3;
  options.per_class = 5;
  options.width = 128;
  options.height = 96;
  options.seed = 11;
  options.threads = 1;
  options.out_dir = one.path();
  SynthResult a = WriteSynthDataset(options);
  options.threads = 3;
  options.out_dir = three.path();
  SynthResult b = WriteSynthDataset(options);

  EXPECT_EQ(a.images, 15u);
  EXPECT_EQ(b.images, 15u);
  EXPECT_EQ(a.bytes, b.bytes);
  auto files = ReadTree(one.path());
  EXPECT_EQ(files, ReadTree(three.path()));
  ASSERT_EQ(files.size(), 15u);
  EXPECT_EQ(files.front().first, "class_000/img_000000.jpg");
  EXPECT_EQ(files.back().first, "class_002/img_000004.jpg");
  uint64_t total = 0;
  for (const auto& [name, bytes] : files) {
    total += bytes.size();
    ImageInfo info = ReadImageInfo(bytes, name);
    EXPECT_EQ(info.format, ImageFormat::kJpeg);
    EXPECT_EQ(info.width, 128);
    EXPECT_EQ(info.height, 96);
    EXPECT_EQ(info.colorspace, "RGB");
    int class_id = std::stoi(name.substr(6, 3)), index = std::stoi(name.substr(14, 6));
    // The file holds its own image: close to it, farther from its neighbour's.
    Image decoded = DecodeImage(bytes, name);
    double own = MeanAbsDiff(decoded, MakeSynthImage(class_id, 3, index, 128, 96, 11));
    EXPECT_LT(own, 8.0) << name;
    EXPECT_LT(own, MeanAbsDiff(decoded, MakeSynthImage(class_id, 3, index ^ 1, 128, 96, 11)))
        << name;
  }
  EXPECT_EQ(total, a.bytes);
}

TEST(SynthDatasetTest, RejectsBadOptions) {
  TempDir dir;
  SynthOptions options;
  options.out_dir = dir.path();
  options.per_class = 1;
  auto rejects = [&](auto change) {
    SynthOptions o = options;
    change(o);
    EXPECT_THROW(WriteSynthDataset(o), Error);
  };
  rejects([](SynthOptions& o) { o.out_dir.clear(); });
  rejects([](SynthOptions& o) { o.classes = 0; });
  rejects([](SynthOptions& o) { o.per_class = -1; });
  rejects([](SynthOptions& o) { o.width = 0; });
  rejects([](SynthOptions& o) { o.quality = 101; });
  EXPECT_TRUE(ListDirectory(dir.path()).empty());
}

}  // namespace
}  // namespace imgpipe
