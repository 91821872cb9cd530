// Helpers shared by the image tests: test-data paths and synthetic pixels.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "image/image.h"
#include "image/resize.h"
#include "util/file.h"

namespace imgpipe {

// A path under ${IMGPIPE_TESTDATA_DIR} (../shared/testdata).
inline std::string TestDataPath(const std::string& relative) {
  return JoinPath(IMGPIPE_TESTDATA_DIR, relative);
}

// Paths of the image files in a test-data folder (not its image_list.txt), sorted.
inline std::vector<std::string> ImageFilesIn(const std::string& relative_dir) {
  std::vector<std::string> paths;
  for (const std::string& name : ListDirectory(TestDataPath(relative_dir))) {
    if (name != "image_list.txt") paths.push_back(TestDataPath(JoinPath(relative_dir, name)));
  }
  return paths;
}

// A smooth test picture: each channel a different gradient, so JPEG keeps it well and
// any swap of channels, rows or columns shows.
// Uses one resize kernel while in scope, then goes back to kAuto.
struct ScopedResizeKernel {
  explicit ScopedResizeKernel(ResizeKernel kernel) { SetResizeKernel(kernel); }
  ~ScopedResizeKernel() { SetResizeKernel(ResizeKernel::kAuto); }
};

inline Image GradientImage(int width, int height, int channels) {
  Image image;
  image.width = width;
  image.height = height;
  image.channels = channels;
  image.pixels.resize(static_cast<size_t>(width) * height * channels);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      uint8_t* p = image.row(y) + static_cast<size_t>(x) * channels;
      int values[3] = {255 * x / std::max(1, width - 1), 255 * y / std::max(1, height - 1),
                       255 * (x + y) / std::max(1, width + height - 2)};
      for (int c = 0; c < channels; ++c) p[c] = static_cast<uint8_t>(values[c % 3]);
    }
  }
  return image;
}

// Mean absolute difference of two images of equal size.
inline double MeanAbsDiff(const Image& a, const Image& b) {
  double sum = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i) sum += std::abs(a.pixels[i] - b.pixels[i]);
  return a.pixels.empty() ? 0 : sum / a.pixels.size();
}

// The width x height window of `image` at (x, y), copied.
inline Image CropImage(const Image& image, int x, int y, int width, int height) {
  Image out;
  out.width = width;
  out.height = height;
  out.channels = image.channels;
  out.pixels.resize(out.row_bytes() * height);
  for (int r = 0; r < height; ++r) {
    std::copy_n(image.row(y + r) + static_cast<size_t>(x) * image.channels, out.row_bytes(),
                out.row(r));
  }
  return out;
}

// Largest absolute difference of two images of equal size.
inline int MaxAbsDiff(const Image& a, const Image& b) {
  int most = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i) most = std::max(most, std::abs(a.pixels[i] - b.pixels[i]));
  return most;
}

// An APP1 Exif segment carrying `orientation`, in big- or little-endian TIFF form.
inline std::string ExifSegment(int orientation, bool big_endian) {
  using namespace std::string_literals;
  std::string tiff = big_endian ? "MM\0*\0\0\0\x08\0\x01\x01\x12\0\x03\0\0\0\x01\0"s +
                                      char(orientation) + "\0\0\0\0\0\0"s
                                : "II*\0\x08\0\0\0\x01\0\x12\x01\x03\0\x01\0\0\0"s +
                                      char(orientation) + "\0\0\0\0\0\0\0"s;
  std::string payload = "Exif\0\0"s + tiff;
  size_t length = payload.size() + 2;
  return "\xFF\xE1"s + char(length >> 8) + char(length & 0xFF) + payload;
}

// `jpeg` with an Exif segment carrying `orientation` inserted after its SOI marker.
inline std::string WithExifOrientation(const std::string& jpeg, int orientation) {
  return jpeg.substr(0, 2) + ExifSegment(orientation, true) + jpeg.substr(2);
}

}  // namespace imgpipe
