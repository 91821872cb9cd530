// Fuzzes the JPEG crop-window decoder. The whole input is the JPEG; its last 12 bytes
// (after the EOI marker, where libjpeg stops reading, once the fuzzer appends there)
// also choose the window, the minimum size for DCT scaling, the channels, whether
// EXIF orientation applies and whether the columns libjpeg decodes beside the window are
// kept. An unscaled window (where `box` says) must equal that window of DecodeImage,
// and neither decode may depend on what the thread decoded before (decode_history.h).
#include <cstdint>
#include <cstring>

#include "decode_history.h"
#include "fuzz_util.h"
#include "image/jpeg_region_decoder.h"

namespace imgpipe {
namespace {

// Reads the parameters from the end of the input, two bytes each.
class Parameters {
 public:
  explicit Parameters(std::string_view bytes) : bytes_(bytes), pos_(bytes.size()) {}
  int Next() {
    int value = 0;
    for (int i = 0; i < 2 && pos_ > 0; ++i) value = value << 8 | static_cast<uint8_t>(bytes_[--pos_]);
    return value;
  }

 private:
  std::string_view bytes_;
  size_t pos_;
};

}  // namespace
}  // namespace imgpipe

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgpipe;
  constexpr uint64_t kMaxPixels = uint64_t{1} << 22;
  const std::string_view jpeg = fuzz::AsView(data, size);
  const std::string path = "fuzz.jpg";
  ImageInfo info;
  if (!fuzz::IgnoringErrors([&] { info = ReadImageInfo(jpeg, path, kMaxPixels); })) return 0;

  // 1. The options, from the parameter bytes.
  Parameters parameters(jpeg);
  const int flags = parameters.Next();
  JpegRegionOptions options;
  options.max_pixels = kMaxPixels;
  options.channels = flags & 1 ? 1 : 3;
  options.apply_exif_orientation = (flags & 2) == 0;
  const int width = options.apply_exif_orientation ? info.decoded_width() : info.width;
  const int height = options.apply_exif_orientation ? info.decoded_height() : info.height;
  CropWindow window;
  window.x = parameters.Next() % width;
  window.y = parameters.Next() % height;
  window.width = 1 + parameters.Next() % (width - window.x);
  window.height = 1 + parameters.Next() % (height - window.y);
  if (flags & 4) window.x += width;  // outside the image: an Error
  options.crop = window;
  options.keep_decoded_columns = (flags & 16) != 0;
  if (flags & 8) {
    options.min_width = parameters.Next() % (window.width + 1);
    options.min_height = parameters.Next() % (window.height + 1);
  }

  // 2. Decode the window; unscaled, it must match the full decode.
  int scale = 0;
  PixelBox box;
  DecodeOutcome outcome = fuzz::DecodeIndependentOfHistory(
      [&] { return DecodeJpegRegion(jpeg, path, options, &scale, &box); }, kMaxPixels);
  if (!outcome.image) return 0;
  const Image& region = *outcome.image;
  FUZZ_CHECK((flags & 4) == 0);
  FUZZ_CHECK(scale == 1 || scale == 2 || scale == 4 || scale == 8);
  FUZZ_CHECK(region.channels == options.channels);
  FUZZ_CHECK(region.pixels.size() == region.row_bytes() * region.height);
  if (scale != 1) return 0;
  // The window within the result: all of it, or where `box` says with kept columns.
  const int bx = static_cast<int>(box.x0), by = static_cast<int>(box.y0);
  FUZZ_CHECK(box.x0 == bx && box.y0 == by && box.width() == window.width &&
             box.height() == window.height && bx >= 0 && by >= 0 &&
             bx + window.width <= region.width && by + window.height <= region.height);
  if (!options.keep_decoded_columns) {
    FUZZ_CHECK(region.width == window.width && region.height == window.height);
  }
  if (!options.apply_exif_orientation) return 0;
  DecodeOptions full_options;
  full_options.channels = options.channels;
  full_options.max_pixels = kMaxPixels;
  DecodeOutcome full = fuzz::DecodeIndependentOfHistory(
      [&] { return DecodeImage(jpeg, path, full_options); }, kMaxPixels);
  if (!full.image) return 0;
  for (int y = 0; y < window.height; ++y) {
    FUZZ_CHECK(std::memcmp(region.row(by + y) + bx * region.channels,
                           full.image->row(window.y + y) + window.x * full.image->channels,
                           static_cast<size_t>(window.width) * region.channels) == 0);
  }
  return 0;
}
