#include "image/resize.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "image/codec.h"
#include "image/image_test_util.h"
#include "util/error.h"
#include "util/file.h"

namespace imgpipe {
namespace {

Image Row(std::vector<uint8_t> values) {
  Image image;
  image.width = static_cast<int>(values.size());
  image.height = 1;
  image.channels = 1;
  image.pixels = std::move(values);
  return image;
}

Image Constant(int width, int height, int channels, uint8_t value) {
  Image image;
  image.width = width;
  image.height = height;
  image.channels = channels;
  image.pixels.assign(static_cast<size_t>(width) * height * channels, value);
  return image;
}

TEST(ResizeTest, UpscalingIsPlainBilinear) {
  // Two pixels to four: centres at 0.25, 0.75, 1.25, 1.75 of the input; the outer ones
  // see only the edge pixel.
  Image out = Resize(Row({0, 100}), 4, 1);
  EXPECT_EQ(out.pixels, (std::vector<uint8_t>{0, 25, 75, 100}));
}

TEST(ResizeTest, HalvingUsesTheWidenedTriangle) {
  // Shrinking by 2 widens the triangle to support 2: weights 1/8, 3/8, 3/8, 1/8 around
  // each output pixel, renormalised to 3/7, 3/7, 1/7 at the edges where a tap falls out.
  Image out = Resize(Row({0, 0, 80, 80, 0, 0, 240, 240}), 4, 1);
  // 80/7 = 11.4; (3*80 + 3*80)/8 = 60; (80 + 240)/8 = 40; (3*240 + 3*240)/7 = 205.7.
  EXPECT_EQ(out.pixels, (std::vector<uint8_t>{11, 60, 40, 206}));
}

TEST(ResizeTest, ConstantStaysConstantAtAnySize) {
  for (int channels : {1, 3, 4}) {
    const Image src = Constant(97, 61, channels, 173);
    for (auto [w, h] : {std::pair{224, 224}, {13, 7}, {97, 61}, {1, 1}, {300, 20}, {50, 61}}) {
      Image out = Resize(src, w, h);
      ASSERT_EQ(out.width, w);
      ASSERT_EQ(out.height, h);
      ASSERT_EQ(out.channels, channels);
      for (uint8_t v : out.pixels) ASSERT_EQ(v, 173) << w << "x" << h << "x" << channels;
    }
  }
}

// a and b agree except in their outermost `border` rows and columns.
void ExpectSameInside(const Image& a, const Image& b, int border) {
  ASSERT_EQ(a.width, b.width);
  ASSERT_EQ(a.height, b.height);
  for (int y = border; y < a.height - border; ++y) {
    for (size_t i = static_cast<size_t>(border * a.channels);
         i < static_cast<size_t>((a.width - border) * a.channels); ++i) {
      ASSERT_EQ(a.row(y)[i], b.row(y)[i]) << "row " << y << " byte " << i;
    }
  }
}

TEST(ResizeTest, SameSizeAndWholePixelBoxes) {
  const Image src = GradientImage(123, 77, 3);
  EXPECT_EQ(Resize(src, 123, 77).pixels, src.pixels);
  // A box of whole pixels at its own size is the crop.
  EXPECT_EQ(Resize(src, PixelBox{10, 5, 60, 45}, 50, 40).pixels,
            CropImage(src, 10, 5, 50, 40).pixels);
  // At another size, the crop resized, except at the box's edges: there the filter
  // reads the pixels around the box (as Pillow's box= does), where the crop has none.
  const Image resized = Resize(src, PixelBox{10, 5, 60, 45}, 31, 17);
  const Image cropped = Resize(CropImage(src, 10, 5, 50, 40), 31, 17);
  ExpectSameInside(resized, cropped, 1);
  EXPECT_NE(resized.pixels, cropped.pixels);
  // Only one axis resized.
  ExpectSameInside(Resize(src, PixelBox{3, 0, 103, 77}, 40, 77),
                   Resize(CropImage(src, 3, 0, 100, 77), 40, 77), 1);
  ExpectSameInside(Resize(src, PixelBox{0, 2, 123, 62}, 123, 33),
                   Resize(CropImage(src, 0, 2, 123, 60), 123, 33), 1);
}

TEST(ResizeTest, StridedBuffers) {
  const Image src = GradientImage(40, 30, 3);
  const Image expected = Resize(src, 17, 11);
  // Source rows padded to 128 bytes, destination rows to 64.
  std::vector<uint8_t> padded(128 * 30, 0xAA);
  for (int y = 0; y < 30; ++y) std::copy_n(src.row(y), src.row_bytes(), &padded[128 * y]);
  std::vector<uint8_t> out(64 * 11, 0x55);
  ResizeInto(padded.data(), 40, 30, 128, 3, out.data(), 17, 11, 64);
  for (int y = 0; y < 11; ++y) {
    EXPECT_TRUE(std::equal(expected.row(y), expected.row(y) + 51, &out[64 * y]));
    EXPECT_EQ(out[64 * y + 51], 0x55);  // padding untouched
  }
}

TEST(ResizeTest, BadArgumentsAreErrors) {
  const Image src = GradientImage(20, 10, 3);
  EXPECT_THROW(Resize(src, 0, 5), Error);
  EXPECT_THROW(Resize(src, 5, -1), Error);
  EXPECT_THROW(Resize(src, PixelBox{-1, 0, 10, 10}, 5, 5), Error);
  EXPECT_THROW(Resize(src, PixelBox{0, 0, 21, 10}, 5, 5), Error);
  EXPECT_THROW(Resize(src, PixelBox{5, 0, 5, 10}, 5, 5), Error);
  EXPECT_THROW(Resize(Image{}, 5, 5), Error);
  Image five = Constant(4, 4, 5, 0);
  EXPECT_THROW(Resize(five, 2, 2), Error);
}

// ResizeCropInto gives the bytes of Resize then a crop, from any held part of the image
// that covers what the crop reads, with every kernel; and refuses a part that does not.
TEST(ResizeTest, ResizeCropMatchesResizeThenCrop) {
  const Image src = GradientImage(301, 203, 3);
  const std::vector<ResizeCrop> crops = {
      {301, 203, 150, 101, 20, 7, 97, 80},   // both axes shrink
      {301, 203, 301, 150, 33, 40, 200, 64},  // only vertical
      {301, 203, 120, 203, 5, 50, 100, 60},   // only horizontal
      {301, 203, 301, 203, 9, 9, 30, 20},     // neither
      {301, 203, 640, 431, 100, 200, 224, 224},  // upscale
      {301, 203, 37, 25, 0, 0, 37, 25}};     // the whole resize
  for (ResizeKernel kernel : AvailableResizeKernels()) {
    ScopedResizeKernel scoped(kernel);
    for (const ResizeCrop& rc : crops) {
      SCOPED_TRACE(std::string(ResizeKernelName(kernel)) + " crop at " +
                   std::to_string(rc.crop_x) + "," + std::to_string(rc.crop_y));
      const Image expected = CropImage(Resize(src, rc.resized_width, rc.resized_height),
                                       rc.crop_x, rc.crop_y, rc.crop_width, rc.crop_height);
      const ResizeCropSpan need = ResizeCropSource(rc);
      // Held: the whole image, then exactly what the crop reads.
      for (const ResizeCropSpan& held : {ResizeCropSpan{0, 0, 301, 203}, need}) {
        const Image part = CropImage(src, held.x0, held.y0, held.x1 - held.x0, held.y1 - held.y0);
        Image out = Constant(rc.crop_width, rc.crop_height, 3, 7);
        ResizeCropInto(part.pixels.data(), held, part.row_bytes(), 3, rc, out.pixels.data(),
                       out.row_bytes());
        EXPECT_EQ(out.pixels, expected.pixels);
      }
      if (need.x0 > 0) {
        const ResizeCropSpan short_of{need.x0 + 1, need.y0, need.x1, need.y1};
        Image out = Constant(rc.crop_width, rc.crop_height, 3, 7);
        EXPECT_THROW(ResizeCropInto(src.pixels.data(), short_of, src.row_bytes(), 3, rc,
                                    out.pixels.data(), out.row_bytes()),
                     Error);
      }
    }
  }
  EXPECT_THROW(ResizeCropSource(ResizeCrop{301, 203, 150, 101, 100, 0, 97, 80}), Error);
  EXPECT_THROW(ResizeCropSource(ResizeCrop{0, 203, 150, 101, 0, 0, 97, 80}), Error);
}

// One comparison with Pillow: an input, a box and an output size.
struct PilCase {
  std::string name;
  Image input;
  PixelBox box;
  int width, height;
};

// Runs pil_resize.py (Pillow, through /usr/bin/python3) on every case and returns its
// outputs. Any failure of the script fails the test.
std::vector<Image> ResizeWithPil(const std::vector<PilCase>& cases) {
  const std::string dir = ::testing::TempDir() + "/pil_resize_" + std::to_string(getpid());
  MakeDirectories(dir);
  std::string manifest;
  for (size_t i = 0; i < cases.size(); ++i) {
    const PilCase& c = cases[i];
    const std::string in = JoinPath(dir, std::to_string(i) + ".in");
    WriteFileAtomic(in, std::string_view(reinterpret_cast<const char*>(c.input.pixels.data()),
                                         c.input.pixels.size()),
                    false);
    manifest += std::string(c.input.channels == 1 ? "L " : "RGB ") + in + " " +
                std::to_string(c.input.width) + " " + std::to_string(c.input.height) + " " +
                JoinPath(dir, std::to_string(i) + ".out") + " " + std::to_string(c.width) +
                " " + std::to_string(c.height) + " " + std::to_string(c.box.x0) + " " +
                std::to_string(c.box.y0) + " " + std::to_string(c.box.x1) + " " +
                std::to_string(c.box.y1) + "\n";
  }
  const std::string manifest_path = JoinPath(dir, "manifest.txt");
  WriteFileAtomic(manifest_path, manifest, false);
  const std::string command = "/usr/bin/python3 " + IMGPIPE_SOURCE_DIR + "/src/image/pil_resize.py " +
                              manifest_path;
  const int status = std::system(command.c_str());
  EXPECT_EQ(status, 0) << command;
  std::vector<Image> outputs;
  for (size_t i = 0; i < cases.size(); ++i) {
    Image out;
    out.width = cases[i].width;
    out.height = cases[i].height;
    out.channels = cases[i].input.channels;
    const std::string path = JoinPath(dir, std::to_string(i) + ".out");
    if (status == 0) {
      std::string bytes = ReadFile(path);
      out.pixels.assign(bytes.begin(), bytes.end());
    }
    outputs.push_back(std::move(out));
    RemoveFile(path);
    RemoveFile(JoinPath(dir, std::to_string(i) + ".in"));
  }
  RemoveFile(manifest_path);
  return outputs;
}

// Resize computes what Pillow's Image.resize(size, BILINEAR, box) does (torchvision's
// antialiased Resize on PIL images): the same coefficients and 22-bit fixed point, so
// the same bytes, under every kernel (portable, SSE4.1, AVX2), on real photos:
// shrinking to 224 wide, to 224x224, to 256 on the shorter side, a crop to 224x224
// (whole-pixel and fractional boxes), an upscale, and grayscale.
TEST(ResizeTest, MatchesPillowOnPhotos) {
  std::vector<PilCase> cases;
  std::vector<std::string> photos = {ImageFilesIn("images/photos-by-class/100").at(0),
                                     ImageFilesIn("images/photos-by-class/134").at(0),
                                     ImageFilesIn("images/photos-by-class/182").at(1)};
  for (const char* dir : {"train/ants", "train/bees", "val/ants", "val/bees"}) {
    const std::vector<std::string> files =
        ImageFilesIn(std::string("images/hymenoptera/") + dir);
    for (size_t i = 0; i < files.size() && i < 12; i += 4) photos.push_back(files[i]);
  }
  for (const std::string& path : photos) {
    const std::string name = BaseName(path);
    const Image photo = DecodeImage(ReadFile(path), path);
    const int w = photo.width, h = photo.height;
    const PixelBox all{0, 0, static_cast<double>(w), static_cast<double>(h)};
    const int shorter = std::min(w, h);
    cases.push_back({name + " to 224 wide", photo, all, 224, 224 * h / w});
    cases.push_back({name + " to 224x224", photo, all, 224, 224});
    cases.push_back({name + " shorter side 256", photo, all, w * 256 / shorter,
                     h * 256 / shorter});
    cases.push_back({name + " crop to 224", photo, PixelBox{37, 21, 37 + w / 2.0, 21 + h / 2.0},
                     224, 224});
    cases.push_back({name + " fractional box", photo,
                     PixelBox{10.5, 3.25, std::min(300.75, w - 0.5), std::min(280.5, h - 0.5)},
                     224, 224});
    cases.push_back({name + " upscale", photo, PixelBox{100, 60, 200, 140}, 224, 224});
    DecodeOptions gray;
    gray.channels = 1;
    cases.push_back({name + " gray", DecodeImage(ReadFile(path), path, gray), all, 301, 199});
  }
  const std::vector<Image> pil = ResizeWithPil(cases);
  for (ResizeKernel kernel : AvailableResizeKernels()) {
    ScopedResizeKernel scoped(kernel);
    int max_diff = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      SCOPED_TRACE(cases[i].name + " with the " + ResizeKernelName(kernel) + " kernel");
      const PilCase& c = cases[i];
      const Image ours = Resize(c.input, c.box, c.width, c.height);
      ASSERT_EQ(pil[i].pixels.size(), ours.pixels.size());
      max_diff = std::max(max_diff, MaxAbsDiff(ours, pil[i]));
      EXPECT_LE(MaxAbsDiff(ours, pil[i]), 0);
      EXPECT_LT(MeanAbsDiff(ours, pil[i]), 0.001);
    }
    std::printf("%s: %zu cases on %zu photos, max difference from Pillow %d\n",
                ResizeKernelName(kernel), cases.size(), photos.size(), max_diff);
  }
}

}  // namespace
}  // namespace imgpipe
