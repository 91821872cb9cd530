#include "pipeline/input_list.h"

#include <gtest/gtest.h>

#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

const std::string kPhotos = std::string(IMGPIPE_TESTDATA_DIR) + "/images/photos-by-class";

TEST(ListImageFolder, ListsEveryClassAndFile) {
  InputList list = ListImageFolder(kPhotos);
  // 19 class folders hold the 47 photos (the folder also has image_list.txt at its top,
  // which is not in a class and so not an input).
  EXPECT_EQ(list.class_names.size(), 19u);
  EXPECT_EQ(list.images.size(), 47u);
  for (const InputImage& image : list.images) {
    ASSERT_GE(image.label, 0);
    ASSERT_LT(image.label, 19);
    // name is class/file, and its class folder is the label's class name
    EXPECT_EQ(image.name.substr(0, image.name.find('/')), list.class_names[image.label]);
    EXPECT_EQ(image.path, kPhotos + "/" + image.name);
  }
  EXPECT_TRUE(std::is_sorted(list.class_names.begin(), list.class_names.end()));
}

TEST(ListImageFolder, FolderWithoutClassesIsAnError) {
  EXPECT_THROW(ListImageFolder(kPhotos + "/" + ListDirectory(kPhotos)[0]), Error);
}

TEST(ParseManifest, CsvWithHeaderQuotesAndNames) {
  InputList list = ParseManifest(
      "label,path\ncat,a.jpg\r\ndog,\"b,c.jpg\"\n\n\"cat\",\"/abs/\"\"q\"\".jpg\"\n", true, "/data",
      "m.csv");
  ASSERT_EQ(list.images.size(), 3u);
  EXPECT_EQ(list.class_names, (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(list.images[0].name, "/abs/\"q\".jpg");
  EXPECT_EQ(list.images[0].path, "/abs/\"q\".jpg");
  EXPECT_EQ(list.images[1].path, "/data/a.jpg");
  EXPECT_EQ(list.images[1].label, 0);
  EXPECT_EQ(list.images[2].name, "b,c.jpg");
  EXPECT_EQ(list.images[2].label, 1);
}

TEST(ParseManifest, IntegerLabelsKeepTheirValues) {
  InputList list = ParseManifest("x.jpg,10\ny.jpg,2\n", true, ".", "m.csv");
  EXPECT_EQ(list.class_names.size(), 11u);
  EXPECT_EQ(list.images[0].label, 10);
  EXPECT_EQ(list.images[1].label, 2);
}

TEST(ParseManifest, JsonLines) {
  InputList list = ParseManifest(
      "{\"path\": \"a.jpg\", \"label\": \"zebra\"}\n\n{\"label\": 3, \"path\": \"b.jpg\"}\n",
      false, "root", "m.jsonl");
  ASSERT_EQ(list.images.size(), 2u);
  EXPECT_EQ(list.class_names, (std::vector<std::string>{"3", "zebra"}));
  EXPECT_EQ(list.images[0].path, "root/a.jpg");
}

TEST(ParseManifest, BadLinesNameFileAndOffset) {
  try {
    ParseManifest("a.jpg,cat\nb.jpg\n", true, ".", "m.csv");
    FAIL();
  } catch (const DataError& e) {
    EXPECT_EQ(e.path(), "m.csv");
    EXPECT_EQ(e.offset(), 10u);
  }
  try {
    ParseManifest("{\"path\":\"a\",\"label\":1}\n{oops\n", false, ".", "m.jsonl");
    FAIL();
  } catch (const DataError& e) {
    EXPECT_EQ(e.offset(), 23u);
  }
  EXPECT_THROW(ParseManifest("\"unterminated,cat\n", true, ".", "m.csv"), DataError);
  EXPECT_THROW(ParseManifest("{\"path\":\"a\"}\n", false, ".", "m.jsonl"), DataError);
  EXPECT_THROW(ParseManifest("", true, ".", "m.csv"), DataError);
}

// Found by fuzz/manifest_fuzzer: one integer label of 22222222 made a list of 22
// million class names (a 10 s timeout; 2147483647 would ask for ~64 GB). Labels above
// 1048575 are now a DataError at their line.
TEST(ParseManifest, FuzzRegressionHugeIntegerLabel) {
  static const char kCrash[] =
      "22222222\"l!bel\xff\xff\xff\xff*z,\"00022222222\",+22221\0abg\x01{\"el\"";
  try {
    ParseManifest(std::string(kCrash, sizeof kCrash - 1), true, ".", "m.csv");
    FAIL();
  } catch (const DataError& e) {
    EXPECT_EQ(e.offset(), 0u);
    EXPECT_NE(e.reason().find("integer label 22222222 exceeds"), std::string::npos) << e.what();
  }
  try {
    ParseManifest("{\"path\":\"a\",\"label\":1}\n{\"path\":\"b\",\"label\":2147483647}\n", false,
                  ".", "m.jsonl");
    FAIL();
  } catch (const DataError& e) {
    EXPECT_EQ(e.offset(), 23u);
  }
  EXPECT_EQ(ParseManifest("a.jpg,1048575\n", true, ".", "m.csv").class_names.size(), 1048576u);
}

TEST(ReadManifest, UnknownExtensionIsAnError) {
  EXPECT_THROW(ReadManifest("list.txt"), Error);
}

}  // namespace
}  // namespace imgpipe
