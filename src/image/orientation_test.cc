#include "image/orientation.h"

#include <gtest/gtest.h>

#include "image/image_test_util.h"

namespace imgpipe {
namespace {

// Where displayed pixel (x, y) comes from in the stored w x h image, written as the
// inverse of each EXIF transform (the code maps forward).
void SourceOf(int orientation, int x, int y, int w, int h, int* sx, int* sy) {
  switch (orientation) {
    case 1: *sx = x;         *sy = y;         break;
    case 2: *sx = w - 1 - x; *sy = y;         break;
    case 3: *sx = w - 1 - x; *sy = h - 1 - y; break;
    case 4: *sx = x;         *sy = h - 1 - y; break;
    case 5: *sx = y;         *sy = x;         break;
    case 6: *sx = y;         *sy = h - 1 - x; break;
    case 7: *sx = w - 1 - y; *sy = h - 1 - x; break;
    case 8: *sx = w - 1 - y; *sy = x;         break;
  }
}

TEST(OrientationTest, EveryOrientationMovesEveryPixel) {
  for (int channels : {1, 3, 4}) {
    Image image = GradientImage(5, 3, channels);
    for (size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = static_cast<uint8_t>(i);
    for (int orientation = 1; orientation <= 8; ++orientation) {
      Image out = ApplyExifOrientation(image, orientation);
      ASSERT_EQ(out.channels, channels);
      ASSERT_EQ(out.width, orientation >= 5 ? 3 : 5) << orientation;
      ASSERT_EQ(out.height, orientation >= 5 ? 5 : 3) << orientation;
      for (int y = 0; y < out.height; ++y) {
        for (int x = 0; x < out.width; ++x) {
          int sx = 0, sy = 0;
          SourceOf(orientation, x, y, image.width, image.height, &sx, &sy);
          for (int c = 0; c < channels; ++c) {
            ASSERT_EQ(out.row(y)[x * channels + c], image.row(sy)[sx * channels + c])
                << "orientation " << orientation << " at " << x << "," << y;
          }
        }
      }
    }
  }
}

TEST(OrientationTest, SixTurnsClockwise) {
  // 2x1 image: left pixel 1, right pixel 2. Turned clockwise: a 1x2 column, 1 on top.
  Image image;
  image.width = 2;
  image.height = 1;
  image.channels = 1;
  image.pixels = {1, 2};
  Image out = ApplyExifOrientation(image, 6);
  EXPECT_EQ(out.width, 1);
  EXPECT_EQ(out.height, 2);
  EXPECT_EQ(out.pixels, (std::vector<uint8_t>{1, 2}));
  out = ApplyExifOrientation(image, 8);
  EXPECT_EQ(out.pixels, (std::vector<uint8_t>{2, 1}));
}

TEST(OrientationTest, OutOfRangeLeavesImage) {
  Image image = GradientImage(4, 2, 3);
  for (int orientation : {0, 1, 9, -3}) {
    Image out = ApplyExifOrientation(image, orientation);
    EXPECT_EQ(out.width, 4);
    EXPECT_EQ(out.pixels, image.pixels);
  }
}

}  // namespace
}  // namespace imgpipe
