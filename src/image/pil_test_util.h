// Helpers for tests that compare imgpipe's decodes with Pillow's: pil_decode.py run
// through /usr/bin/python3 on files a test writes.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "image/codec.h"
#include "image/image.h"
#include "image/image_test_util.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {

// A fresh folder for a test's files.
inline std::string TestDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name + "_" + std::to_string(getpid());
  MakeDirectories(dir);
  return dir;
}

// Pillow's decode of `path`, as pil_decode.py left it in `dir` (NAME.rgb and NAME.txt,
// or NAME.error): its RGB image, or nullopt where Pillow refused the file.
inline std::optional<Image> ReadPillowDecode(const std::string& dir, const std::string& name) {
  const std::string stem = JoinPath(dir, name.substr(0, name.rfind('.')));
  if (PathExists(stem + ".error")) return std::nullopt;
  Image rgb;
  std::ifstream txt(stem + ".txt");
  txt >> rgb.width >> rgb.height;
  rgb.channels = 3;
  const std::string pixels = ReadFile(stem + ".rgb");
  rgb.pixels.assign(pixels.begin(), pixels.end());
  return rgb;
}

// Writes each of `files` (name -> bytes) into `dir`, runs pil_decode.py on them and
// returns Pillow's Image.open(path).convert("RGB") of each (ReadPillowDecode).
inline std::map<std::string, std::optional<Image>> PillowDecodes(
    const std::string& dir, const std::map<std::string, std::string>& files) {
  std::string command = "/usr/bin/python3 " + IMGPIPE_SOURCE_DIR + "/src/image/pil_decode.py " + dir;
  for (const auto& [name, bytes] : files) {
    WriteFileAtomic(JoinPath(dir, name), bytes, /*sync=*/false);
    command += " " + JoinPath(dir, name);
  }
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  std::map<std::string, std::optional<Image>> out;
  for (const auto& [name, bytes] : files) out[name] = ReadPillowDecode(dir, name);
  return out;
}

// Whether a and b are the same image.
inline ::testing::AssertionResult SameImage(const Image& a, const Image& b) {
  if (a.width != b.width || a.height != b.height || a.channels != b.channels) {
    return ::testing::AssertionFailure()
           << a.width << "x" << a.height << "x" << a.channels << " vs " << b.width << "x"
           << b.height << "x" << b.channels;
  }
  if (a.pixels != b.pixels) {
    return ::testing::AssertionFailure() << "pixels differ, by up to " << MaxAbsDiff(a, b);
  }
  return ::testing::AssertionSuccess();
}

// Each file `prefix`*`suffix` of `dir` (written by a pil_*.py script, which ran
// pil_decode.py on it) is decoded by Pillow, and DecodeImage decodes it to Pillow's
// pixels (max difference 0; integer gray of more than 8 bits compared with Pillow's
// values' top 8 bits: pil_decode.py) and, in gray, to one channel of the same size;
// ReadImageInfo gives the oriented size. Cut to 3/4 of its bytes it is refused, as
// Pillow refuses it ("image file is truncated").
inline void ExpectPillowsPixels(const std::string& dir, const std::string& prefix,
                                const std::string& suffix) {
  int checked = 0;
  for (const std::string& name : ListDirectory(dir)) {
    if (!name.starts_with(prefix) || !name.ends_with(suffix)) continue;
    SCOPED_TRACE(name);
    ++checked;
    const std::optional<Image> pil = ReadPillowDecode(dir, name);
    ASSERT_TRUE(pil) << "Pillow refused it";
    const std::string bytes = ReadFile(JoinPath(dir, name));
    try {
      EXPECT_TRUE(SameImage(DecodeImage(bytes, name), *pil));
      const ImageInfo info = ReadImageInfo(bytes, name);
      EXPECT_EQ(info.decoded_width(), pil->width);
      EXPECT_EQ(info.decoded_height(), pil->height);
      DecodeOptions gray;
      gray.channels = 1;
      const Image one = DecodeImage(bytes, name, gray);
      EXPECT_EQ(one.width, pil->width);
      EXPECT_EQ(one.height, pil->height);
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
    EXPECT_THROW(DecodeImage(bytes.substr(0, bytes.size() * 3 / 4), name), DataError);
  }
  EXPECT_GT(checked, 0) << prefix << "*" << suffix;
}

}  // namespace imgpipe
