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

#include "image/image.h"
#include "image/image_test_util.h"
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

}  // namespace imgpipe
