// Fuzzes image decoding through our wrapper (codec.h): format detection, the header
// parsers, TurboJPEG and OpenCV's decoders (PNG and the rest), with a 4-megapixel limit.
// A decoded image must have the size its header announced (after EXIF orientation), and
// the outcome must not depend on what the thread decoded before (decode_history.h).
// Inputs with libjpeg warnings that IsFatalJpegWarning accepts decode like any other.
#include <cstdint>

#include "decode_history.h"
#include "fuzz_util.h"
#include "image/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgpipe;
  constexpr uint64_t kMaxPixels = uint64_t{1} << 22;
  const std::string_view bytes = fuzz::AsView(data, size);
  const std::string path = "fuzz.img";
  ImageInfo info;
  if (!fuzz::IgnoringErrors([&] { info = ReadImageInfo(bytes, path, kMaxPixels); })) return 0;
  FUZZ_CHECK(info.width >= 1 && info.height >= 1 &&
             static_cast<uint64_t>(info.width) * info.height <= kMaxPixels);
  for (int channels : {3, 1}) {
    DecodeOutcome outcome = fuzz::DecodeIndependentOfHistory(
        [&] {
          DecodeOptions options;
          options.channels = channels;
          options.max_pixels = kMaxPixels;
          return DecodeImage(bytes, path, options);
        },
        kMaxPixels);
    if (!outcome.image) continue;
    const Image& image = *outcome.image;
    FUZZ_CHECK(image.width == info.decoded_width() && image.height == info.decoded_height());
    FUZZ_CHECK(image.channels == channels);
    FUZZ_CHECK(image.pixels.size() == image.row_bytes() * image.height);
  }
  return 0;
}
