#include "pipeline/input_list.h"

#include <gtest/gtest.h>
#include <unistd.h>

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
  EXPECT_EQ(list.size(), 47u);
  for (size_t i = 0; i < list.size(); ++i) {
    InputImage image = list.image(i);
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
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list.class_names, (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(list.name(0), "/abs/\"q\".jpg");
  EXPECT_EQ(list.path(0), "/abs/\"q\".jpg");
  EXPECT_EQ(list.path(1), "/data/a.jpg");
  EXPECT_EQ(list.label(1), 0);
  EXPECT_EQ(list.name(2), "b,c.jpg");
  EXPECT_EQ(list.label(2), 1);
}

TEST(ParseManifest, IntegerLabelsKeepTheirValues) {
  InputList list = ParseManifest("x.jpg,10\ny.jpg,2\n", true, ".", "m.csv");
  EXPECT_EQ(list.class_names.size(), 11u);
  EXPECT_EQ(list.label(0), 10);
  EXPECT_EQ(list.label(1), 2);
}

TEST(ParseManifest, JsonLines) {
  InputList list = ParseManifest(
      "{\"path\": \"a.jpg\", \"label\": \"zebra\"}\n\n{\"label\": 3, \"path\": \"b.jpg\"}\n",
      false, "root", "m.jsonl");
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list.class_names, (std::vector<std::string>{"3", "zebra"}));
  EXPECT_EQ(list.path(0), "root/a.jpg");
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

// Any cut of the text into pieces gives the same list (or the same error).
TEST(ParseManifest, PiecesOfEverySizeGiveTheSameList) {
  const std::string csv = "label,path\ncat,a.jpg\r\ndog,\"b,\"\"c\n.jpg\"\n\n\"cat\",/z.jpg\n";
  const std::string jsonl = "{\"path\": \"a.jpg\", \"label\": 2}\n\n{\"label\": 3, \"path\": \"b\"}";
  InputList whole = ParseManifest(csv, true, "/data", "m.csv");
  InputList whole_json = ParseManifest(jsonl, false, "/data", "m.jsonl");
  ASSERT_EQ(whole.size(), 3u);
  ASSERT_EQ(whole_json.size(), 2u);
  for (size_t piece = 1; piece <= csv.size(); ++piece) {
    InputList list = ParseManifest(csv, true, "/data", "m.csv", piece);
    ASSERT_EQ(list.size(), whole.size()) << piece;
    EXPECT_EQ(list.class_names, whole.class_names) << piece;
    for (size_t i = 0; i < list.size(); ++i) {
      EXPECT_EQ(list.name(i), whole.name(i)) << piece;
      EXPECT_EQ(list.label(i), whole.label(i)) << piece;
    }
    InputList json = ParseManifest(jsonl, false, "/data", "m.jsonl", piece);
    ASSERT_EQ(json.size(), 2u) << piece;
    EXPECT_EQ(json.name(1), "b") << piece;
    try {
      ParseManifest("a.jpg,cat\n\"b.jpg,dog\n", true, ".", "m.csv", piece);
      FAIL() << piece;
    } catch (const DataError& e) {
      EXPECT_EQ(e.offset(), 10u) << piece;
      EXPECT_NE(e.reason().find("unterminated"), std::string::npos) << piece;
    }
  }
}

TEST(InputList, NamesOfEveryLengthSurviveTheArenaAndSortStably) {
  InputList list("/root");
  std::string long_name(3 << 20, 'x');  // longer than a block: a block of its own
  list.Add("b.jpg", 1);
  list.Add(long_name, 2);
  list.Add("a.jpg", 3);
  list.Add("/abs/b.jpg", 4);
  list.Add("a.jpg", 5);
  for (int i = 0; i < 100000; ++i) list.Add("n" + std::to_string(i), i);  // many blocks
  list.SortByName();
  ASSERT_EQ(list.size(), 100005u);
  EXPECT_EQ(list.name(0), "/abs/b.jpg");
  EXPECT_EQ(list.path(0), "/abs/b.jpg");  // absolute: as it is
  EXPECT_EQ(list.name(1), "a.jpg");
  EXPECT_EQ(list.label(1), 3);  // equal names keep their order
  EXPECT_EQ(list.label(2), 5);
  EXPECT_EQ(list.path(1), "/root/a.jpg");
  EXPECT_EQ(list.image(3).name, "b.jpg");
  EXPECT_EQ(list.image(3).label, 1);
  EXPECT_EQ(list.name(list.size() - 1), long_name);
  EXPECT_EQ(list.name(4), "n0");
  EXPECT_EQ(list.name(5), "n1");
  EXPECT_EQ(list.name(6), "n10");
}

// ReadManifest reads the file in pieces of 4 MiB: lines (and quoted fields with
// newlines) cut by a piece's end, offsets past the first piece, and a header.
TEST(ReadManifest, LinesAcrossPiecesKeepTheirFieldsAndOffsets) {
  std::string dir = JoinPath(::testing::TempDir(), "manifest_pieces_" + std::to_string(::getpid()));
  MakeDirectories(dir);
  std::string text = "label,path\n";
  int rows = 0;
  while (text.size() < (9u << 20)) {
    text += "class_" + std::to_string(rows % 7) + ",\"img_" + std::to_string(rows) +
            (rows % 1000 == 0 ? "\nwith a newline, \"\"quoted\"\"" : "") + ".jpg\"\r\n";
    ++rows;
  }
  WriteFileAtomic(JoinPath(dir, "m.csv"), text);
  InputList list = ReadManifest(JoinPath(dir, "m.csv"));
  ASSERT_EQ(list.size(), static_cast<size_t>(rows));
  EXPECT_EQ(list.class_names.size(), 7u);
  EXPECT_EQ(list.name(0), "img_0\nwith a newline, \"quoted\".jpg");
  EXPECT_EQ(list.label(0), 0);
  EXPECT_EQ(list.path(0), JoinPath(dir, list.name(0)));
  size_t with_newline = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string_view name = list.name(i);
    with_newline += name.find('\n') != std::string_view::npos;
    ASSERT_EQ(name.substr(name.size() - 4), ".jpg") << i;
  }
  EXPECT_EQ(with_newline, static_cast<size_t>((rows + 999) / 1000));
  // A bad line far past the first piece: its own offset in the file.
  std::string bad = text + "only_one_field\n";
  WriteFileAtomic(JoinPath(dir, "bad.csv"), bad);
  try {
    ReadManifest(JoinPath(dir, "bad.csv"));
    FAIL();
  } catch (const DataError& e) {
    EXPECT_EQ(e.offset(), text.size());
  }
  // JSON Lines, the same way.
  std::string jsonl;
  for (int i = 0; jsonl.size() < (5u << 20); ++i) {
    jsonl += "{\"path\": \"p" + std::to_string(i) + ".jpg\", \"label\": " + std::to_string(i % 3) + "}\n";
  }
  std::string bad_jsonl = jsonl + "{broken\n";
  WriteFileAtomic(JoinPath(dir, "m.jsonl"), bad_jsonl);
  try {
    ReadManifest(JoinPath(dir, "m.jsonl"));
    FAIL();
  } catch (const DataError& e) {
    EXPECT_EQ(e.offset(), jsonl.size());
  }
  WriteFileAtomic(JoinPath(dir, "m.jsonl"), jsonl);
  InputList from_json = ReadManifest(JoinPath(dir, "m.jsonl"));
  EXPECT_EQ(from_json.class_names, (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(from_json.name(0), "p0.jpg");
}

TEST(ReadManifest, UnknownExtensionIsAnError) {
  EXPECT_THROW(ReadManifest("list.txt"), Error);
}

}  // namespace
}  // namespace imgpipe
