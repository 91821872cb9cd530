#include "record/example.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "record/record_test_util.h"
#include "util/error.h"

namespace imgpipe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TempDir;
using testing::WriteRecords;

TEST(ExampleTest, BuildsAndReadsFeatures) {
  Example example;
  Features* f = example.mutable_features();
  AddBytesFeature(f, "image/encoded", std::string("\xff\xd8\x00\x01", 4));
  AddInt64Feature(f, "image/class/label", 7);
  AddInt64Feature(f, "image/class/label", -3);
  AddFloatFeature(f, "bbox", 0.5f);
  EXPECT_EQ(GetBytesFeature(*f, "image/encoded"), std::string("\xff\xd8\x00\x01", 4));
  EXPECT_EQ(GetInt64Feature(*f, "image/class/label"), 7);
  EXPECT_EQ(f->feature().at("image/class/label").int64_list().value(1), -3);
  EXPECT_EQ(GetInt64Feature(*f, "missing"), std::nullopt);
  EXPECT_EQ(GetInt64Feature(*f, "image/encoded"), std::nullopt);  // another kind
  EXPECT_EQ(GetBytesFeature(*f, "bbox"), std::nullopt);
  EXPECT_THROW(AddFloatFeature(f, "image/encoded", 1.0f), Error);
  EXPECT_THAT(DescribeFeatures(*f),
              ElementsAre(FeatureDescription{"bbox", "float", 1, 0},
                          FeatureDescription{"image/class/label", "int64", 2, 0},
                          FeatureDescription{"image/encoded", "bytes", 1, 0}));
  (*f->mutable_feature())["empty"];
  EXPECT_EQ(DescribeFeatures(*f)[1], (FeatureDescription{"empty", "empty", 0, 0}));
}

TEST(ExampleTest, SerialisesDeterministically) {
  // The same features added in opposite orders give the same bytes.
  Example a;
  Example b;
  for (int i = 0; i < 50; ++i) {
    AddInt64Feature(a.mutable_features(), "k" + std::to_string(i), i);
    AddInt64Feature(b.mutable_features(), "k" + std::to_string(49 - i), 49 - i);
  }
  std::string bytes = SerializeExample(a);
  EXPECT_EQ(bytes, SerializeExample(b));
  Example parsed = ParseExample(bytes, "mem", 0);
  EXPECT_EQ(parsed.features().feature_size(), 50);
  EXPECT_EQ(SerializeExample(parsed), bytes);
  EXPECT_EQ(SerializeExample(Example()), "");
}

TEST(ExampleTest, ParseFailureNamesPathAndOffset) {
  for (std::string bad : {std::string("\xff\xff\xff"), std::string("\x0a\x05\x0a\x03", 4)}) {
    try {
      ParseExample(bad, "shard-3.tfrecord", 1234);
      FAIL() << "no error";
    } catch (const DataError& e) {
      EXPECT_EQ(e.path(), "shard-3.tfrecord");
      EXPECT_EQ(e.offset(), 1234u);
      EXPECT_THAT(e.what(), HasSubstr("shard-3.tfrecord: offset 1234: "));
      EXPECT_THAT(e.reason(), HasSubstr("not a valid tf.train.Example"));
    }
    EXPECT_THROW(ParseSequenceExample(bad, "s", 0), DataError);
  }
}

TEST(ExampleTest, DescribesFeatureLists) {
  SequenceExample example;
  auto& lists = *example.mutable_feature_lists()->mutable_feature_list();
  for (int step = 0; step < 3; ++step) {
    tf::Feature* f = lists["tokens"].add_feature();
    for (int v = 0; v <= step; ++v) f->mutable_int64_list()->add_value(v);
  }
  lists["audio"].add_feature()->mutable_float_list()->add_value(1.0f);
  lists["none"];
  EXPECT_THAT(DescribeFeatureLists(example.feature_lists()),
              ElementsAre(FeatureDescription{"audio", "float", 1, 1},
                          FeatureDescription{"none", "empty", 0, 0},
                          FeatureDescription{"tokens", "int64", 6, 3}));
}

// Runs `command`, returning its standard output; fails the test on a non-zero exit.
std::string RunCommand(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run " << command;
    return "";
  }
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  int status = ::pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << command << " failed (status " << status << "); /usr/bin/python3 needs "
      << "python3-protobuf (scripts/install-deps.sh installs it)";
  return out;
}

std::string Hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string FloatBitsHex(float v) {
  char bytes[4];
  std::memcpy(bytes, &v, 4);  // little-endian host
  return Hex(std::string_view(bytes, 4));
}

// What testdata_check_example.py prints for `example`, built from our message.
nlohmann::json ExpectedJson(const Example& example) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, feature] : example.features().feature()) {
    nlohmann::json values = nlohmann::json::array();
    std::string kind = "empty";
    if (feature.has_bytes_list()) {
      kind = "bytes";
      for (const std::string& v : feature.bytes_list().value()) values.push_back(Hex(v));
    } else if (feature.has_float_list()) {
      kind = "float";
      for (float v : feature.float_list().value()) values.push_back(FloatBitsHex(v));
    } else if (feature.has_int64_list()) {
      kind = "int64";
      for (int64_t v : feature.int64_list().value()) values.push_back(v);
    }
    out[key] = {{"kind", kind}, {"values", values}};
  }
  return out;
}

// Our Example bytes, in our TFRecord framing, decode with protobuf reflection over
// TensorFlow's field numbers in a separate Python program.
TEST(ExampleTest, DecodesIndependentlyWithTensorFlowFieldNumbers) {
  std::vector<Example> examples(3);
  AddBytesFeature(examples[0].mutable_features(), "image/encoded",
                  std::string("\xff\xd8\xff\xe0\x00\x10JFIF\x00", 11));
  AddBytesFeature(examples[0].mutable_features(), "image/encoded", "");
  AddInt64Feature(examples[0].mutable_features(), "image/class/label", 281);
  AddInt64Feature(examples[0].mutable_features(), "image/class/label",
                  std::numeric_limits<int64_t>::min());
  AddInt64Feature(examples[0].mutable_features(), "image/class/label",
                  std::numeric_limits<int64_t>::max());
  AddFloatFeature(examples[0].mutable_features(), "bbox", 0.1f);
  AddFloatFeature(examples[0].mutable_features(), "bbox", -2.5e-38f);
  AddFloatFeature(examples[0].mutable_features(), "bbox", std::numeric_limits<float>::infinity());
  AddBytesFeature(examples[1].mutable_features(), "text", "caf\xc3\xa9 and \x01\x02");
  (*examples[1].mutable_features()->mutable_feature())["empty"];
  for (int i = 0; i < 300; ++i) AddFloatFeature(examples[1].mutable_features(), "many", i * 0.25f);

  TempDir dir;
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib}) {
    SCOPED_TRACE(CompressionName(c));
    std::string path = dir.File(std::string("examples.") + CompressionName(c));
    std::vector<std::string> records;
    for (const Example& e : examples) records.push_back(SerializeExample(e));
    WriteRecords(path, records, c);
    std::string script = std::string(IMGPIPE_SOURCE_DIR) + "/src/record/testdata_check_example.py";
    std::string out =
        RunCommand("/usr/bin/python3 '" + script + "' '" + path + "' " + CompressionName(c));
    nlohmann::json decoded = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(decoded.is_discarded()) << out;
    ASSERT_EQ(decoded.size(), examples.size());
    for (size_t i = 0; i < examples.size(); ++i) {
      EXPECT_EQ(decoded[i], ExpectedJson(examples[i])) << "record " << i;
    }
  }
}

}  // namespace
}  // namespace imgpipe
