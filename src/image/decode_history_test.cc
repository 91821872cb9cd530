// A decode must not depend on what the same thread decoded before
// (fuzz-regressions/jpeg-region-state): every file of the test data, decoded by every
// decoder on a fresh thread, must give the same pixels or the same error when decoded
// right after each file that fails to decode, and after good JPEGs whose Huffman tables
// are not the standard ones.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "image/codec.h"
#include "image/decode_outcome.h"
#include "image/image_test_util.h"
#include "util/file.h"

namespace imgpipe {
namespace {

// Every file under these test-data folders, recursively, sorted.
std::vector<std::string> FilesUnder(const std::vector<std::string>& relative_dirs) {
  std::vector<std::string> files;
  std::function<void(const std::string&)> walk = [&](const std::string& dir) {
    for (const std::string& name : ListDirectory(dir)) {
      const std::string path = JoinPath(dir, name);
      if (IsDirectory(path)) {
        walk(path);
      } else if (name.find("README") == std::string::npos &&
                 name.find("LICENSE") == std::string::npos && name != "image_list.txt") {
        files.push_back(path);
      }
    }
  };
  for (const std::string& dir : relative_dirs) walk(TestDataPath(dir));
  std::sort(files.begin(), files.end());
  return files;
}

const std::vector<std::string>& TestFiles() {
  static const std::vector<std::string> files =
      FilesUnder({"images", "bad-images", "fuzz-regressions"});
  return files;
}

// The outcome of each decoder on `bytes`.
std::vector<DecodeOutcome> DecodeAll(const std::string& bytes, const std::string& path) {
  std::vector<DecodeOutcome> outcomes;
  for (const NamedDecoder& decoder : AllImageDecoders()) {
    outcomes.push_back(OutcomeOf([&] { return decoder.decode(bytes, path); }));
  }
  return outcomes;
}

// Decodes each test file on a thread of its own, which has decoded nothing before.
std::map<std::string, std::vector<DecodeOutcome>> FreshThreadOutcomes() {
  std::map<std::string, std::vector<DecodeOutcome>> outcomes;
  for (const std::string& path : TestFiles()) {
    const std::string bytes = ReadFile(path);
    std::thread([&] { outcomes[path] = DecodeAll(bytes, path); }).join();
  }
  return outcomes;
}

// Checks, on one new thread, that each test file decodes as on a fresh thread when it
// follows a decode of `before` by every decoder. Each file is decoded by one decoder
// after `before`, the next one for the next `rotation` (so that a file meets every
// decoder over four predecessors, at a quarter of the cost).
void ExpectSameAfter(const std::string& before_path, size_t rotation,
                     const std::map<std::string, std::vector<DecodeOutcome>>& fresh) {
  const std::string before = ReadFile(before_path);
  const std::vector<NamedDecoder> decoders = AllImageDecoders();
  std::thread([&] {
    size_t file_index = 0;
    for (const auto& [path, expected] : fresh) {
      const size_t i = (file_index++ + rotation) % decoders.size();
      const std::string bytes = ReadFile(path);
      DecodeAll(before, before_path);
      DecodeOutcome outcome = OutcomeOf([&] { return decoders[i].decode(bytes, path); });
      EXPECT_TRUE(outcome == expected[i])
          << decoders[i].name << " of " << path << " after " << before_path << ": "
          << outcome.Describe() << ", on a fresh thread: " << expected[i].Describe();
    }
  }).join();
}

TEST(DecodeHistory, EveryFileDecodesAsOnAFreshThreadAfterEachFailingFile) {
  const auto fresh = FreshThreadOutcomes();
  ASSERT_GT(fresh.size(), 400u);  // the photographs, mixed formats, bad images
  std::vector<std::string> failing;
  for (const auto& [path, outcomes] : fresh) {
    if (!outcomes[0].image) failing.push_back(path);
  }
  // The bad images, the fuzz regressions' two broken JPEGs, the misnamed files...
  ASSERT_GE(failing.size(), 5u);
  for (size_t k = 0; k < failing.size(); ++k) ExpectSameAfter(failing[k], k, fresh);
}

// Good JPEGs with optimised (not the standard) Huffman tables, made by Pillow at test
// time; a decoder that kept their tables would decode a file that lacks a table of its
// own differently (2-ycc420-exif6-19x13.jpg after a photograph failed with "corrupt JPEG
// data" before the fix).
TEST(DecodeHistory, EveryFileDecodesAsOnAFreshThreadAfterGoodJpegs) {
  const auto fresh = FreshThreadOutcomes();
  const std::string made =
      JoinPath(::testing::TempDir(), "decode_history." + std::to_string(::getpid()));
  MakeDirectories(made);
  const std::string script =
      "import sys\nfrom PIL import Image\n"
      "for i, (path, sampling) in enumerate(zip(sys.argv[2::2], sys.argv[3::2])):\n"
      "    Image.open(path).convert('RGB').save('%s/%d.jpg' % (sys.argv[1], i), quality=80,\n"
      "        optimize=True, subsampling=int(sampling))\n";
  const std::string command =
      "/usr/bin/python3 -c \"" + script + "\" " + made + " " +
      TestDataPath("images/photos-by-class/100/swan-3584559_640.jpg") + " 2 " +
      TestDataPath("images/mixed-formats/0/444.jpg") + " 0";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const std::vector<std::string> names = ListDirectory(made);
  ASSERT_EQ(names.size(), 2u);
  for (size_t k = 0; k < names.size(); ++k) ExpectSameAfter(JoinPath(made, names[k]), k, fresh);
}

// The encoder convert re-encodes with: the same image gives the same bytes on a fresh
// thread and after encodes of other images and a refused encode.
TEST(DecodeHistory, EncodeJpegDoesNotDependOnEarlierEncodes) {
  const Image image = GradientImage(37, 23, 3);
  std::string fresh;
  std::thread([&] { fresh = EncodeJpeg(image, 90); }).join();
  std::thread([&] {
    EncodeJpeg(GradientImage(64, 64, 1), 30);
    EXPECT_THROW(EncodeJpeg(GradientImage(8, 8, 3), 0), Error);
    EncodeJpeg(GradientImage(16, 9, 3), 100);
    EXPECT_EQ(EncodeJpeg(image, 90), fresh);
  }).join();
}

}  // namespace
}  // namespace imgpipe
