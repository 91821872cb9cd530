#include "monitor/tensorboard_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

std::string FreshDir(const std::string& name) {
  std::string dir = JoinPath(::testing::TempDir(), "tensorboard_" + std::to_string(::getpid()) + "_" + name);
  EXPECT_EQ(std::system(("rm -rf '" + dir + "'").c_str()), 0);
  return dir;
}

TEST(TensorBoardWriter, WritesScalarsOurReaderReadsBack) {
  std::string dir = FreshDir("roundtrip");
  std::string path;
  {
    TensorBoardWriter writer(dir);
    path = writer.path();
    EXPECT_EQ(BaseName(path).rfind("events.out.tfevents.", 0), 0u);
    for (int step = 0; step < 5; ++step) writer.AddScalar("train/loss", 2.5 - step * 0.5, step, 1000 + step);
    writer.AddScalar("train/top1", 0.75, 4, 1004);
  }
  std::string version;
  std::vector<ScalarEvent> events = ReadScalarEvents(path, &version);
  EXPECT_EQ(version, "brain.Event:2");
  ASSERT_EQ(events.size(), 6u);
  EXPECT_EQ(events[2].tag, "train/loss");
  EXPECT_EQ(events[2].step, 2);
  EXPECT_DOUBLE_EQ(events[2].value, 1.5);
  EXPECT_DOUBLE_EQ(events[2].wall_time, 1002);
  EXPECT_EQ(events[5].tag, "train/top1");
}

// Our files, decoded by protobuf reflection with TensorFlow's field numbers.
TEST(TensorBoardWriter, DecodesWithTensorFlowsFieldNumbers) {
  std::string dir = FreshDir("reflection");
  std::string path;
  {
    TensorBoardWriter writer(dir);
    path = writer.path();
    writer.AddScalar("images_per_s", 1234.5, 7, 1700000000.25);
  }
  std::string script = std::string(IMGPIPE_SOURCE_DIR) + "/src/monitor/check_events.py";
  std::string out = dir + "/decoded.json";
  ASSERT_EQ(std::system(("/usr/bin/python3 '" + script + "' '" + path + "' > '" + out + "'").c_str()), 0);
  auto events = nlohmann::json::parse(ReadFile(out));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["file_version"], "brain.Event:2");
  EXPECT_EQ(events[1]["tag"], "images_per_s");
  EXPECT_EQ(events[1]["step"], 7);
  EXPECT_DOUBLE_EQ(events[1]["simple_value"].get<double>(), 1234.5);
  EXPECT_DOUBLE_EQ(events[1]["wall_time"].get<double>(), 1700000000.25);
}

// Files written by PyTorch's SummaryWriter, read with our reader.
TEST(TensorBoardWriter, ReadsPyTorchSummaryWriterFiles) {
  std::string root = std::string(IMGPIPE_TESTDATA_DIR) + "/tfevents/pytorch-summarywriter";
  for (const char* run : {"run_1", "run_2"}) {
    std::vector<std::string> files = ListDirectory(root + "/" + run);
    ASSERT_EQ(files.size(), 1u);
    std::string version;
    std::vector<ScalarEvent> events = ReadScalarEvents(root + "/" + run + "/" + files[0], &version);
    EXPECT_EQ(version, "brain.Event:2");
    ASSERT_FALSE(events.empty()) << run;
    for (size_t i = 1; i < events.size(); ++i) {
      EXPECT_EQ(events[i].tag, events[0].tag);
      EXPECT_GE(events[i].step, events[i - 1].step);
      EXPECT_GE(events[i].wall_time, events[i - 1].wall_time);
    }
  }
}

TEST(TensorBoardWriter, NonEventFileIsADataError) {
  std::string path = std::string(IMGPIPE_TESTDATA_DIR) + "/tfrecord/pytorch-data/sequence_example.tfrecord";
  EXPECT_THROW(ReadScalarEvents(path), DataError);
}

}  // namespace
}  // namespace imgpipe
