#include "extract/image_classifier.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "extract/checkpoint_test_util.h"
#include "extract/extract_test_util.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe::extract {
namespace {

const std::string kPhotos = std::string(IMGPIPE_TESTDATA_DIR) + "/images/photos-by-class";

std::vector<std::string> SomePhotos() {
  return {kPhotos + "/100/swan-3584559_640.jpg", kPhotos + "/414/backpack-3510412_640.jpg",
          kPhotos + "/84/peacock-90051_640.jpg", kPhotos + "/510/ship-1083562_640.jpg"};
}

// Probabilities in (0, 1], most probable first, distinct classes, `k` of them.
void ExpectRanked(const ImageClassification& image, size_t k) {
  EXPECT_TRUE(image.error.empty()) << image.error;
  ASSERT_EQ(image.top.size(), k) << image.path;
  std::set<int64_t> classes;
  for (size_t i = 0; i < k; ++i) {
    EXPECT_GT(image.top[i].probability, 0);
    EXPECT_LE(image.top[i].probability, 1);
    if (i > 0) {
      EXPECT_GE(image.top[i - 1].probability, image.top[i].probability);
    }
    classes.insert(image.top[i].index);
  }
  EXPECT_EQ(classes.size(), k);
}

double Sum(const ImageClassification& image) {
  double sum = 0;
  for (const ClassProbability& c : image.top) sum += c.probability;
  return sum;
}

TEST(ClassifyImages, CheckpointOnRealPhotosWithItsClassNames) {
  std::string dir = FreshTestDir("classify_checkpoint");
  std::string model = JoinPath(dir, "model.ckpt");
  WriteTestCheckpoint(model, "small-resnet", {"swan", "backpack", "peacock"}, 64);
  ClassifyOptions options;
  options.model = model;
  options.top_k = 3;
  options.batch_size = 3;  // two batches
  ClassifyResult result = ClassifyImages(options, SomePhotos());
  EXPECT_EQ(result.label_source, "checkpoint");
  EXPECT_EQ(result.num_classes, 3);
  ASSERT_EQ(result.images.size(), 4u);
  for (const ImageClassification& image : result.images) {
    ExpectRanked(image, 3);
    EXPECT_NEAR(Sum(image), 1.0, 1e-9);  // all classes: softmax sums to 1
    for (const ClassProbability& c : image.top) {
      EXPECT_EQ(c.name, (std::vector<std::string>{"swan", "backpack", "peacock"})[c.index]);
    }
  }
  EXPECT_EQ(result.images[1].path, SomePhotos()[1]);

  // A labels file wins; one with another number of names is refused.
  WriteFileAtomic(JoinPath(dir, "labels.txt"), "cygnus\r\npack\npavo\n");
  options.labels_file = JoinPath(dir, "labels.txt");
  options.top_k = 10;  // more than the classes: all of them
  ClassifyResult named = ClassifyImages(options, {SomePhotos()[0]});
  EXPECT_EQ(named.label_source, "labels file");
  ASSERT_EQ(named.images[0].top.size(), 3u);
  EXPECT_EQ(named.images[0].top[0].name,
            (std::vector<std::string>{"cygnus", "pack", "pavo"})[named.images[0].top[0].index]);
  EXPECT_NEAR(named.images[0].top[0].probability, result.images[0].top[0].probability, 1e-6);
  WriteFileAtomic(JoinPath(dir, "labels.txt"), "one\ntwo\n");
  EXPECT_THROW(ClassifyImages(options, {SomePhotos()[0]}), Error);
}

TEST(ClassifyImages, BadImagesGetAnErrorAndTheOthersAreClassified) {
  std::string dir = FreshTestDir("classify_bad");
  std::string model = JoinPath(dir, "model.ckpt");
  WriteTestCheckpoint(model, "simple-cnn", {"p", "q"}, 32);
  std::string lossless = std::string(IMGPIPE_TESTDATA_DIR) + "/bad-images/monkey12.jpg";
  std::string missing = JoinPath(dir, "missing.jpg");
  ClassifyOptions options;
  options.model = model;
  options.top_k = 1;
  ClassifyResult result = ClassifyImages(options, {missing, SomePhotos()[0], lossless, SomePhotos()[1]});
  ASSERT_EQ(result.images.size(), 4u);
  EXPECT_NE(result.images[0].error.find(missing), std::string::npos);
  EXPECT_NE(result.images[2].error.find(lossless), std::string::npos);
  EXPECT_TRUE(result.images[0].top.empty());
  ExpectRanked(result.images[1], 1);
  ExpectRanked(result.images[3], 1);
  options.top_k = 0;
  EXPECT_THROW(ClassifyImages(options, {SomePhotos()[0]}), Error);
}

TEST(ClassifyImages, TorchScriptResnet18WithClassIndices) {
  if (!PythonHasTorch()) GTEST_SKIP() << "/usr/bin/python3 has no torch/torchvision";
  ClassifyOptions options;
  options.model = TorchScriptResnet18(true, 1000);
  options.image_size = 96;
  options.top_k = 1000;
  ClassifyResult all = ClassifyImages(options, SomePhotos());
  EXPECT_EQ(all.label_source, "indices");
  EXPECT_EQ(all.num_classes, 1000);
  for (const ImageClassification& image : all.images) {
    ExpectRanked(image, 1000);
    EXPECT_NEAR(Sum(image), 1.0, 1e-9);
    EXPECT_EQ(image.top[0].name, std::to_string(image.top[0].index));
  }
  options.top_k = 5;
  ClassifyResult top5 = ClassifyImages(options, SomePhotos());
  for (size_t i = 0; i < top5.images.size(); ++i) {
    ExpectRanked(top5.images[i], 5);
    for (size_t j = 0; j < 5; ++j) {
      EXPECT_EQ(top5.images[i].top[j].index, all.images[i].top[j].index);
      EXPECT_NEAR(top5.images[i].top[j].probability, all.images[i].top[j].probability, 1e-9);
    }
  }
}

}  // namespace
}  // namespace imgpipe::extract
