// JPEG decoding that does only the work a training or evaluation crop needs: DCT-domain
// scaling (1/2, 1/4, 1/8: decode fewer pixels when the target is smaller) and
// crop-window decode (only the scanlines and iMCU columns that cover the window; as
// tf.image.decode_and_crop_jpeg and DALI's ROI decode do). libjpeg-turbo's libjpeg API:
// jpeg_crop_scanline, jpeg_skip_scanlines, scale_num/scale_denom.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "image/codec.h"
#include "image/image.h"

namespace imgpipe {

// A rectangle in pixels of the image as displayed (after EXIF orientation).
struct CropWindow {
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
  bool operator==(const CropWindow&) const = default;
};

// libjpeg-turbo's faster, inexact settings; the defaults (both off) are DecodeImage's.
struct JpegSpeed {
  // The fast integer IDCT (JDCT_IFAST, TJFLAG_FASTDCT) instead of the accurate one;
  // unscaled decodes only (the scaled IDCTs have one method).
  bool fast_idct = false;
  // Plain (replicating) instead of fancy (triangle) chroma upsampling
  // (do_fancy_upsampling = FALSE, TJFLAG_FASTUPSAMPLE).
  bool fast_upsampling = false;
};

struct JpegRegionOptions {
  // Window to decode (displayed coordinates); the whole image when unset.
  std::optional<CropWindow> crop;
  // Pick the smallest DCT scale among 1, 1/2, 1/4, 1/8 at which the decoded window is
  // still at least min_width x min_height (0 x 0: no scaling).
  int min_width = 0;
  int min_height = 0;
  int scale = 0;  // 1, 2, 4 or 8: this DCT scale denominator, not one chosen by min size
  int channels = 3;  // 3: RGB; 1: grayscale
  uint64_t max_pixels = kDefaultMaxPixels;
  bool apply_exif_orientation = true;
  JpegSpeed speed;  // exact by default
  // Keep the columns beside the window that libjpeg decodes anyway (its iMCU alignment
  // on the left, the upsampling margin on both sides) instead of copying the window out of each
  // row: the result is then wider than the window, and `box` (required) says where the
  // window lies. Off: the result is exactly the window.
  bool keep_decoded_columns = false;
};

// Decodes the window of a JPEG. The result holds exactly the window (scaled by the
// chosen DCT factor, so its size is about window / factor, at least min size; with
// keep_decoded_columns, some columns beside it too); `scale`
// receives that factor (1, 2, 4 or 8). Errors as DecodeImage.
Image DecodeJpegRegion(std::string_view jpeg, const std::string& path,
                       const JpegRegionOptions& options, int* scale = nullptr);

// The same, and `box` receives where the requested window lies in the result, in its
// pixels: the decoded window is the scaled one rounded outwards to whole pixels, so the
// box has fractional edges when the scale is not 1 (resize it with Resize(image, box)).
Image DecodeJpegRegion(std::string_view jpeg, const std::string& path,
                       const JpegRegionOptions& options, int* scale, PixelBox* box);

// The same, into `out`, whose pixel buffer is reused (nothing is allocated once it is
// large enough): for a thread decoding one image after another.
void DecodeJpegRegionInto(std::string_view jpeg, const std::string& path,
                          const JpegRegionOptions& options, Image* out, int* scale = nullptr,
                          PixelBox* box = nullptr);

// Does only the entropy (Huffman) decoding of DecodeJpegRegion(jpeg, path, options):
// the same scale and window, every row down to the window's last skipped
// (jpeg_skip_scanlines: no IDCT, upsampling or colour conversion) but that one, which
// is read; a progressive file's scans are all decoded as the decode does. For cost
// breakdowns. Errors as DecodeJpegRegion.
void EntropyDecodeJpeg(std::string_view jpeg, const std::string& path,
                       const JpegRegionOptions& options);

// Width and height as displayed (EXIF orientation 5-8 swaps them), from the header; the
// result's orientation is 1, as the size already accounts for it. Throws DataError for
// anything but a JPEG that DecodeImage accepts.
ImageInfo ReadDisplayedJpegInfo(std::string_view jpeg, const std::string& path);

}  // namespace imgpipe
