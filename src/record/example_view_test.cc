#include "record/example_view.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "record/example.h"
#include "record/image_feature_keys.h"
#include "record/record_test_util.h"
#include "util/file.h"

namespace imgpipe {
namespace {

using testing::ReadRecords;
using testing::TestdataPath;

// When ExampleView reads `data`, protobuf must parse it too and give every feature the
// same first values. Returns whether ExampleView read it.
bool AgreesWithProtobuf(const std::string& data) {
  std::optional<ExampleView> view = ExampleView::Scan(data);
  if (!view) return false;
  Example example;
  EXPECT_TRUE(example.ParseFromString(data)) << "read in place, but protobuf rejects it";
  for (const FeatureDescription& f : DescribeFeatures(example.features())) {
    EXPECT_EQ(view->FirstBytes(f.key), GetBytesFeature(example.features(), f.key)) << f.key;
    EXPECT_EQ(view->FirstInt64(f.key), GetInt64Feature(example.features(), f.key)) << f.key;
  }
  EXPECT_EQ(view->FirstBytes("absent"), std::nullopt);
  EXPECT_EQ(view->FirstInt64("absent"), std::nullopt);
  return true;
}

// Every record TensorFlow wrote (bytes, packed floats and int64s) is read in place.
TEST(ExampleViewTest, ReadsTensorFlowsRecordsAsProtobufDoes) {
  for (const char* file : {"tfrecord/tfx/mnist.tfrecord", "tfrecord/pytorch-data/example.tfrecord",
                           "tfrecord/tfx/penguin-train-00000-of-00001.gz"}) {
    std::vector<std::string> records = ReadRecords(TestdataPath(file));
    ASSERT_FALSE(records.empty()) << file;
    for (const std::string& r : records) ASSERT_TRUE(AgreesWithProtobuf(r)) << file;
  }
}

// A record as imgpipe convert writes it, around a real photo: the image viewed in place
// (a view into the record, not a copy).
std::string PhotoRecord() {
  std::string jpeg = ReadFile(TestdataPath("images/photos-by-class/84/peacock-90051_640.jpg"));
  Example example;
  Features* f = example.mutable_features();
  AddBytesFeature(f, image_keys::kEncoded, jpeg);
  AddInt64Feature(f, image_keys::kLabel, 5);
  AddInt64Feature(f, image_keys::kHeight, -427);
  AddFloatFeature(f, "bbox", 0.25f);
  AddBytesFeature(f, image_keys::kFilename, "84/peacock-90051_640.jpg");
  (*f->mutable_feature())["empty"];
  return SerializeExample(example);
}

TEST(ExampleViewTest, ViewsTheImageInPlace) {
  std::string record = PhotoRecord();
  ASSERT_TRUE(AgreesWithProtobuf(record));
  ExampleView view = *ExampleView::Scan(record);
  std::string_view image = *view.FirstBytes(image_keys::kEncoded);
  EXPECT_GE(image.data(), record.data());
  EXPECT_LE(image.data() + image.size(), record.data() + record.size());
  EXPECT_EQ(image.substr(0, 2), std::string_view("\xff\xd8", 2));
  EXPECT_EQ(view.FirstInt64(image_keys::kHeight), -427);
  EXPECT_EQ(view.FirstInt64("bbox"), std::nullopt);     // float
  EXPECT_EQ(view.FirstBytes("empty"), std::nullopt);    // no kind
}

// Every cut and every single-byte change of the first 300 bytes of a real record: read
// in place only where protobuf parses it to the same values; the rest is left to
// protobuf (which rejects some and accepts others).
TEST(ExampleViewTest, DamagedRecordsAreLeftToProtobufOrReadAlike) {
  std::string record = PhotoRecord();
  std::vector<std::string> small = ReadRecords(TestdataPath("tfrecord/pytorch-data/example.tfrecord"));
  for (const std::string& base : {record, small[0]}) {
    int read = 0;
    for (size_t cut = 0; cut < base.size(); cut += cut < 400 ? 1 : 997) {
      read += AgreesWithProtobuf(base.substr(0, cut));
    }
    EXPECT_LT(read, 3);  // a cut record is hardly ever a plain one
    for (size_t i = 0; i < std::min<size_t>(base.size(), 300); ++i) {
      for (int bit : {0x01, 0x08, 0x80}) {
        std::string damaged = base;
        damaged[i] = static_cast<char>(damaged[i] ^ bit);
        AgreesWithProtobuf(damaged);
      }
    }
  }
}

// Encodings protobuf accepts that the writers do not produce: a repeated key (protobuf
// keeps the last), a non-ASCII key, a value before its key, an unknown field: left to
// protobuf. Unpacked int64s and floats are read in place.
TEST(ExampleViewTest, UnusualEncodingsAreLeftToProtobuf) {
  auto delimited = [](char tag, const std::string& body) {
    return std::string(1, tag) + static_cast<char>(body.size()) + body;
  };
  auto entry = [&](const std::string& key, const std::string& feature) {
    return delimited('\x0a', delimited('\x0a', key) + delimited('\x12', feature));
  };
  auto example = [&](const std::string& entries) { return delimited('\x0a', entries); };
  std::string int64_unpacked = delimited('\x1a', std::string("\x08\x07\x08\x09", 4));
  std::string int64_packed = delimited('\x1a', delimited('\x0a', "\x03\x04"));
  std::string float_unpacked = delimited('\x12', std::string("\x0d\x00\x00\x80\x3f", 5));

  EXPECT_TRUE(AgreesWithProtobuf(example(entry("a", int64_unpacked) + entry("f", float_unpacked))));
  EXPECT_EQ(ExampleView::Scan(example(entry("a", int64_unpacked)))->FirstInt64("a"), 7);
  EXPECT_EQ(ExampleView::Scan(example(entry("a", int64_packed)))->FirstInt64("a"), 3);
  for (const std::string& unusual :
       {example(entry("a", int64_unpacked) + entry("a", int64_packed)),  // repeated key
        example(entry("\xc3\xa9", int64_packed)),                        // é
        example(delimited('\x0a', delimited('\x12', int64_packed) + delimited('\x0a', "a"))),
        example(entry("a", int64_packed)) + std::string("\x10\x01", 2),  // unknown field
        std::string()}) {
    EXPECT_FALSE(ExampleView::Scan(unusual).has_value());
  }
  Example last;
  ASSERT_TRUE(last.ParseFromString(example(entry("a", int64_unpacked) + entry("a", int64_packed))));
  EXPECT_EQ(GetInt64Feature(last.features(), "a"), 3);  // why a repeated key is protobuf's
}

}  // namespace
}  // namespace imgpipe
