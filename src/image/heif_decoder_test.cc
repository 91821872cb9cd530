#include "image/heif_decoder.h"

#include <gtest/gtest.h>
#include <libheif/heif.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "image/decoder_test_util.h"

namespace imgpipe {
namespace {

// A smooth RGB picture, w x h.
std::vector<uint8_t> Picture(int width, int height) {
  std::vector<uint8_t> px(size_t(width) * height * 3);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      uint8_t* p = px.data() + 3 * (size_t(y) * width + x);
      p[0] = uint8_t(x * 255 / width);
      p[1] = uint8_t(y * 255 / height);
      p[2] = uint8_t(128);
    }
  }
  return px;
}

// `pixels` encoded by libheif's own encoder (x265 for HEVC, aom for AV1) at quality 90,
// or "" when this libheif has no encoder for the format.
std::string Encode(heif_compression_format format, int width, int height,
                   const std::vector<uint8_t>& pixels) {
  heif_context* ctx = heif_context_alloc();
  heif_encoder* encoder = nullptr;
  if (heif_context_get_encoder_for_format(ctx, format, &encoder).code != heif_error_Ok) {
    heif_context_free(ctx);
    return "";
  }
  heif_encoder_set_lossy_quality(encoder, 90);
  heif_image* image = nullptr;
  heif_image_create(width, height, heif_colorspace_RGB, heif_chroma_interleaved_RGB, &image);
  heif_image_add_plane(image, heif_channel_interleaved, width, height, 8);
  int stride = 0;
  uint8_t* plane = heif_image_get_plane(image, heif_channel_interleaved, &stride);
  for (int y = 0; y < height; ++y) {
    std::memcpy(plane + size_t(stride) * y, pixels.data() + size_t(y) * width * 3, width * 3);
  }
  std::string out;
  if (heif_context_encode_image(ctx, image, encoder, nullptr, nullptr).code == heif_error_Ok) {
    heif_writer writer{1, [](heif_context*, const void* data, size_t size, void* user) {
                         auto* bytes = static_cast<const char*>(data);
                         static_cast<std::string*>(user)->append(bytes, size);
                         return heif_error{heif_error_Ok, heif_suberror_Unspecified, ""};
                       }};
    heif_context_write(ctx, &writer, &out);
  }
  heif_image_release(image);
  heif_encoder_release(encoder);
  heif_context_free(ctx);
  return out;
}

void ExpectRoundTrip(heif_compression_format compression, ImageFormat format) {
  const int width = 64, height = 48;
  std::vector<uint8_t> source = Picture(width, height);
  std::string file = Encode(compression, width, height, source);
  if (file.empty()) GTEST_SKIP() << "this libheif has no encoder for " << ImageFormatName(format);
  EXPECT_EQ(DetectImageFormat(file), format);
  std::vector<uint8_t> decoded = DecodeRgb(file, width, height, format);
  ASSERT_EQ(decoded.size(), source.size());
  // Lossy at quality 90 through 4:2:0: the mean error stays small, and a swapped channel
  // or flipped row (errors of ~100) would not.
  double total = 0;
  for (size_t i = 0; i < source.size(); ++i) total += std::abs(int(decoded[i]) - int(source[i]));
  EXPECT_LT(total / source.size(), 4.0);
  // Cut short: libheif's error, as a DataError.
  DecodeFailure f = FailureOf(file.substr(0, file.size() * 2 / 3));
  EXPECT_NE(f.reason, "(no error)");
  EXPECT_NE(f.reason.find(ImageFormatName(format) == std::string("avif") ? "AVIF" : "HEIF"),
            std::string::npos) << f.reason;
}

TEST(HeifDecoderTest, HeicRoundTrip) { ExpectRoundTrip(heif_compression_HEVC, ImageFormat::kHeif); }

TEST(HeifDecoderTest, AvifRoundTrip) { ExpectRoundTrip(heif_compression_AV1, ImageFormat::kAvif); }

TEST(HeifDecoderTest, NotAContainer) {
  std::string junk = Be32(24) + "ftypheic" + Be32(0) + "mif1heic" + std::string(40, 'x');
  EXPECT_EQ(DetectImageFormat(junk), ImageFormat::kHeif);
  EXPECT_NE(FailureOf(junk).reason.find("invalid HEIF: "), std::string::npos);
}

}  // namespace
}  // namespace imgpipe
