#include "image/jpeg_region_decoder.h"

#include <algorithm>
#include <csetjmp>
#include <cstring>
#include <vector>

#include "image/codec_internal.h"
#include "image/jpeg_lib.h"
#include "image/jpeg_markers.h"
#include "image/jpeg_restart_splice.h"
#include "image/orientation.h"
#include "util/error.h"

namespace imgpipe {
namespace {

// Output columns beyond the window that a cropped decode needs so that fancy (triangle)
// upsampling of 2x-subsampled chroma sees the same neighbours as a full decode: the
// sample under the window's last column and the one after it, whole.
constexpr int kUpsamplingMargin = 4;

// EXIF orientation o as the stored -> displayed pixel mapping: displayed =
// transpose?(flip_x?(W - x) : x, flip_y?(H - y) : y), on continuous coordinates.
struct OrientationMap {
  bool transpose, flip_x, flip_y;
};

OrientationMap MapOf(int orientation) {
  switch (orientation) {
    case 2: return {false, true, false};
    case 3: return {false, true, true};
    case 4: return {false, false, true};
    case 5: return {true, false, false};
    case 6: return {true, false, true};
    case 7: return {true, true, true};
    case 8: return {true, true, false};
    default: return {false, false, false};
  }
}

// A displayed box of a stored_width x stored_height image, in stored coordinates.
PixelBox DisplayedToStored(const PixelBox& box, int orientation, double stored_width,
                           double stored_height) {
  OrientationMap map = MapOf(orientation);
  PixelBox b = map.transpose ? PixelBox{box.y0, box.x0, box.y1, box.x1} : box;
  if (map.flip_x) b = {stored_width - b.x1, b.y0, stored_width - b.x0, b.y1};
  if (map.flip_y) b = {b.x0, stored_height - b.y1, b.x1, stored_height - b.y0};
  return b;
}

// The inverse: a stored box, in displayed coordinates.
PixelBox StoredToDisplayed(const PixelBox& box, int orientation, double stored_width,
                           double stored_height) {
  OrientationMap map = MapOf(orientation);
  PixelBox b = box;
  if (map.flip_x) b = {stored_width - b.x1, b.y0, stored_width - b.x0, b.y1};
  if (map.flip_y) b = {b.x0, stored_height - b.y1, b.x1, stored_height - b.y0};
  return map.transpose ? PixelBox{b.y0, b.x0, b.y1, b.x1} : b;
}

// The largest DCT scale denominator (8, 4, 2, 1) at which a window_width x
// window_height window still spans min_width x min_height pixels.
int ChooseScale(int window_width, int window_height, int min_width, int min_height) {
  if (min_width <= 0 && min_height <= 0) return 1;
  for (int denom : {8, 4, 2}) {
    if (window_width >= int64_t{min_width} * denom &&
        window_height >= int64_t{min_height} * denom) {
      return denom;
    }
  }
  return 1;
}

int CeilDiv(int a, int b) { return (a + b - 1) / b; }

// Whether jpeg_crop_scanline gives exactly the columns of a full decode of this started
// decompression. libjpeg-turbo 2.1.5 does not when it scales the DCT (1/2, 1/4) of a
// file with a 4:1 sampling ratio (seen with 4:1:0 and 2x4; 4:1:1, with the same ratio,
// is treated alike): part of the row buffer that fancy upsampling reads is never
// written, so the window's pixels depend on what that memory held before (valgrind:
// uninitialised values from the buffer jinit_d_main_controller allocates; found by
// decode_history_test with images/mixed-formats/0/2x4.jpg and 410.jpg). Unscaled or
// uncropped decodes of those files, and every other sampling, are exact.
bool CropsColumnsExactly(const jpeg_decompress_struct& cinfo) {
  if (cinfo.scale_num == cinfo.scale_denom) return true;
  for (int c = 0; c < cinfo.num_components; ++c) {
    const jpeg_component_info& component = cinfo.comp_info[c];
    if (cinfo.max_h_samp_factor > 2 * component.h_samp_factor ||
        cinfo.max_v_samp_factor > 2 * component.v_samp_factor) {
      return false;
    }
  }
  return true;
}

// Where a started decompression puts a window: its scaled pixels [x0, x1) x [y0, y1),
// rounded outwards, and the scaled column that libjpeg's output column 0 is.
struct ScaledWindow {
  int x0, y0, x1, y1;
  int output_x;
};

// The stored window [x, x + width) x [y, y + height) at the started decompression's
// scale, 1/denom; crops libjpeg's output columns around it (jpeg_crop_scanline).
ScaledWindow CropColumns(jpeg_decompress_struct& cinfo, int x, int y, int width, int height,
                         int denom) {
  // 1. The window at this scale, rounded outwards.
  const int scaled_width = static_cast<int>(cinfo.output_width);
  const int scaled_height = static_cast<int>(cinfo.output_height);
  ScaledWindow w;
  w.x0 = x / denom;
  w.y0 = y / denom;
  w.x1 = std::min(CeilDiv(x + width, denom), scaled_width);
  w.y1 = std::min(CeilDiv(y + height, denom), scaled_height);
  // 2. Columns: libjpeg widens [x0, x1) to the iMCU boundary on the left, and treats
  //    both ends of what it decodes as the image's edges, where fancy upsampling
  //    repeats the last chroma sample instead of reading its neighbour. So ask for a
  //    margin on each side (a real edge needs none): then every column of the window
  //    is upsampled as in a full decode, and the window is exact.
  //    Where libjpeg's column crop is not exact (CropsColumnsExactly), whole rows are
  //    decoded.
  //    A progressive file whose scans leave coefficients out gets block smoothing,
  //    which reads the DC values of two blocks on each side; libjpeg takes the first
  //    cropped block's for those left of it. So such a crop starts two iMCU columns
  //    further left (each holds at least one block of every component).
  const int smoothing_margin =
      cinfo.progressive_mode && cinfo.do_block_smoothing
          ? 2 * cinfo.max_h_samp_factor * cinfo.min_DCT_scaled_size
          : 0;
  const int crop_x0 = std::max(w.x0 - kUpsamplingMargin - smoothing_margin, 0);
  const int crop_x1 = std::min(w.x1 + kUpsamplingMargin, scaled_width);
  JDIMENSION crop_x = 0;
  if (crop_x1 - crop_x0 < scaled_width && CropsColumnsExactly(cinfo)) {
    crop_x = static_cast<JDIMENSION>(crop_x0);
    JDIMENSION crop_width = static_cast<JDIMENSION>(crop_x1 - crop_x0);
    jpeg_crop_scanline(&cinfo, &crop_x, &crop_width);
  }
  w.output_x = static_cast<int>(crop_x);
  return w;
}

// Reads one scanline into `row` (the memory source never suspends, so this returns).
void ReadScanline(jpeg_decompress_struct& cinfo, uint8_t* row) {
  JSAMPROW rows[1] = {row};
  while (jpeg_read_scanlines(&cinfo, rows, 1) != 1) {
  }
}

// DecodeStoredRegion of `jpeg`, a stored_width x stored_height JPEG (checked), into
// `image`.
void DecodeStoredJpegRegion(std::string_view jpeg, const std::string& path, int stored_width,
                            int stored_height, int x, int y, int width, int height, int denom,
                            const JpegRegionOptions& options, bool entropy_only, Image& image,
                            PixelBox* box) {
  const int channels = options.channels;
  LibjpegDecompressor d;
  std::vector<uint8_t> row;   // one output scanline, when the window is copied out of it
  std::vector<uint8_t> cmyk;  // the window as decoded, for CMYK files
  if (setjmp(d.errors.jump) != 0) {
    throw DataError(path, std::nullopt, JpegReason(d.errors.message));
  }
  jpeg_decompress_struct& cinfo = d.cinfo;
  // 1. Header; ReadImageInfo has vetted it, so this only fails on a changed buffer.
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(jpeg.data()), jpeg.size());
  if (jpeg_read_header(&cinfo, TRUE) != JPEG_HEADER_OK ||
      static_cast<int>(cinfo.image_width) != stored_width ||
      static_cast<int>(cinfo.image_height) != stored_height) {
    throw DataError(path, std::nullopt, "invalid JPEG: header changed while decoding");
  }
  const bool is_cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  cinfo.out_color_space = is_cmyk ? JCS_CMYK : channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  cinfo.scale_num = 1;
  cinfo.scale_denom = denom;
  // The defaults, as TurboJPEG's (and so DecodeImage's): accurate integer IDCT, fancy
  // upsampling; or the faster settings the options ask for.
  cinfo.dct_method = options.speed.fast_idct ? JDCT_IFAST : JDCT_ISLOW;
  cinfo.do_fancy_upsampling = options.speed.fast_upsampling ? FALSE : TRUE;
  jpeg_start_decompress(&cinfo);

  // 2. The window and the output columns around it.
  const ScaledWindow w = CropColumns(cinfo, x, y, width, height, denom);
  const int components = cinfo.output_components;
  const size_t output_row_bytes = static_cast<size_t>(cinfo.output_width) * components;

  // 3. Entropy only: skip all but the window's last row (skipping to the image's end
  //    decodes nothing), then read that one.
  if (entropy_only) {
    row.resize(output_row_bytes);
    if (w.y1 > 1) jpeg_skip_scanlines(&cinfo, static_cast<JDIMENSION>(w.y1 - 1));
    ReadScanline(cinfo, row.data());
    jpeg_abort_decompress(&cinfo);
    ReportAcceptedWarnings(d.errors, path);
    return;
  }

  // 4. Rows: skip to y0 (entropy-decoded but not IDCT'd), then read the window's rows,
  //    straight into the image when it may keep libjpeg's columns beside the window,
  //    else through `row`, copying the window's columns out.
  const bool direct = options.keep_decoded_columns && !is_cmyk;
  const int left = direct ? w.x0 - w.output_x : 0;  // columns kept left of the window
  image.width = direct ? static_cast<int>(cinfo.output_width) : w.x1 - w.x0;
  image.height = w.y1 - w.y0;
  image.channels = channels;
  const size_t row_bytes = static_cast<size_t>(image.width) * components;
  std::vector<uint8_t>& target = is_cmyk ? cmyk : image.pixels;
  target.resize(row_bytes * image.height);
  if (!direct) row.resize(output_row_bytes);
  const size_t skip_bytes = static_cast<size_t>(w.x0 - w.output_x) * components;
  if (w.y0 > 0) jpeg_skip_scanlines(&cinfo, static_cast<JDIMENSION>(w.y0));
  for (int r = 0; r < image.height; ++r) {
    uint8_t* dest = target.data() + r * row_bytes;
    ReadScanline(cinfo, direct ? dest : row.data());
    if (!direct) std::memcpy(dest, row.data() + skip_bytes, row_bytes);
  }
  // 5. The rest of the image is not decoded. A window down to the last row reads on to
  //    EOI, as a whole decode does, for the warnings there (bytes before EOI).
  if (w.y1 == static_cast<int>(cinfo.output_height)) {
    jpeg_finish_decompress(&cinfo);
  } else {
    jpeg_abort_decompress(&cinfo);
  }
  ReportAcceptedWarnings(d.errors, path);
  if (is_cmyk) {
    image.pixels.resize(image.row_bytes() * image.height);
    CmykToRgbOrGray(cmyk, ScanJpegMarkers(jpeg).adobe, image);
  }
  if (box != nullptr) {
    *box = {static_cast<double>(x) / denom - w.x0 + left, static_cast<double>(y) / denom - w.y0,
            static_cast<double>(x + width) / denom - w.x0 + left,
            static_cast<double>(y + height) / denom - w.y0};
  }
}

// Decodes the stored (not oriented) window [x, x + width) x [y, y + height) at 1/denom
// scale, rounded outwards to whole scaled pixels, into `image` (with the columns beside
// it that libjpeg decoded, if options.keep_decoded_columns); `box` receives the exact
// window in the result's pixels. `entropy_only`: only the entropy decoding that takes
// (every row down to the window's last, without IDCT); `image` is left alone. A file
// with restart markers has only the MCUs around the window decoded, spliced into a JPEG
// of their own (the same pixels; jpeg_restart_splice.h).
void DecodeStoredRegion(std::string_view jpeg, const std::string& path, const ImageInfo& info,
                        int x, int y, int width, int height, int denom,
                        const JpegRegionOptions& options, bool entropy_only, Image& image,
                        PixelBox* box) {
  // Fancy upsampling reads, for each pixel, the chroma sample beside its own: one
  // (scaled) pixel beyond the window.
  // The splice's bytes are kept per thread: no fresh pages for each image.
  thread_local SplicedJpeg spliced;
  if (!SpliceJpegWindowInto(jpeg, x, y, width, height, denom, spliced)) {
    DecodeStoredJpegRegion(jpeg, path, info.width, info.height, x, y, width, height, denom,
                           options, entropy_only, image, box);
    return;
  }
  DecodeStoredJpegRegion(spliced.bytes, path, spliced.width, spliced.height, x - spliced.x,
                         y - spliced.y, width, height, denom, options, entropy_only, image, box);
}

}  // namespace

ImageInfo ReadDisplayedJpegInfo(std::string_view jpeg, const std::string& path) {
  ImageInfo info = ReadJpegImageInfo(jpeg, path, kDefaultMaxPixels);
  const int width = info.decoded_width(), height = info.decoded_height();
  info.width = width;
  info.height = height;
  info.orientation = 1;
  return info;
}

Image DecodeJpegRegion(std::string_view jpeg, const std::string& path,
                       const JpegRegionOptions& options, int* scale) {
  return DecodeJpegRegion(jpeg, path, options, scale, nullptr);
}

namespace {

// The stored window of a displayed one (checked against the image's size) and the
// DCT scale to decode it at.
struct StoredWindow {
  int x, y, width, height;
  int denom;
};

StoredWindow ChooseStoredWindow(const ImageInfo& info, int orientation, const std::string& path,
                                const JpegRegionOptions& options) {
  const bool transposed = orientation >= 5;
  const int displayed_width = transposed ? info.height : info.width;
  const int displayed_height = transposed ? info.width : info.height;
  // 1. The window, checked in displayed coordinates, then mapped to stored ones.
  CropWindow window = options.crop.value_or(CropWindow{0, 0, displayed_width, displayed_height});
  if (window.width < 1 || window.height < 1 || window.x < 0 || window.y < 0 ||
      window.x > displayed_width - window.width || window.y > displayed_height - window.height) {
    throw Error(path + ": crop window " + std::to_string(window.width) + "x" +
                std::to_string(window.height) + " at (" + std::to_string(window.x) + ", " +
                std::to_string(window.y) + ") is not inside the " +
                std::to_string(displayed_width) + "x" + std::to_string(displayed_height) +
                " image");
  }
  const PixelBox stored = DisplayedToStored(
      PixelBox{static_cast<double>(window.x), static_cast<double>(window.y),
               static_cast<double>(window.x + window.width),
               static_cast<double>(window.y + window.height)},
      orientation, info.width, info.height);
  StoredWindow out{static_cast<int>(stored.x0), static_cast<int>(stored.y0),
                   static_cast<int>(stored.width()), static_cast<int>(stored.height()), 1};
  // 2. The scale: the one asked for, or the smallest that keeps the minimum size.
  if (options.scale != 0 && options.scale != 1 && options.scale != 2 && options.scale != 4 &&
      options.scale != 8) {
    throw Error("DecodeJpegRegion: scale must be 0, 1, 2, 4 or 8, not " +
                std::to_string(options.scale));
  }
  out.denom = options.scale > 0 ? options.scale
              : transposed ? ChooseScale(out.width, out.height, options.min_height, options.min_width)
                           : ChooseScale(out.width, out.height, options.min_width, options.min_height);
  return out;
}

// DecodeJpegRegionInto, or with `entropy_only` just its entropy decoding
// (EntropyDecodeJpeg; `out` is left alone).
void DecodeRegion(std::string_view jpeg, const std::string& path,
                  const JpegRegionOptions& options, bool entropy_only, Image* out, int* scale,
                  PixelBox* box) {
  if (options.channels != 1 && options.channels != 3) {
    throw Error("DecodeJpegRegion: channels must be 1 or 3, not " +
                std::to_string(options.channels));
  }
  if (options.keep_decoded_columns && box == nullptr && !entropy_only) {
    throw Error("DecodeJpegRegion: keep_decoded_columns needs a box to say where the window is");
  }
  // 1. Header checks (format, process, size limit) as DecodeImage makes them, and the
  //    end: a truncated file is refused even where the window lies above the cut.
  const ImageInfo info = ReadJpegImageInfo(jpeg, path, options.max_pixels);
  if (!HasEoiAfterScan(jpeg)) {
    throw DataError(path, std::nullopt, "truncated JPEG data (premature end of file)");
  }
  const int orientation = options.apply_exif_orientation ? info.orientation : 1;
  const StoredWindow w = ChooseStoredWindow(info, orientation, path, options);
  // 2. Decode the stored window at the chosen scale, then orient it.
  PixelBox stored_box;
  try {
    DecodeStoredRegion(jpeg, path, info, w.x, w.y, w.width, w.height, w.denom, options,
                       entropy_only, *out, &stored_box);
  } catch (const std::bad_alloc&) {
    throw DataError(path, std::nullopt,
                    "out of memory decoding a " + std::to_string(w.width) + "x" +
                        std::to_string(w.height) + " window");
  }
  if (entropy_only) return;
  if (box != nullptr) *box = StoredToDisplayed(stored_box, orientation, out->width, out->height);
  if (scale != nullptr) *scale = w.denom;
  if (orientation > 1) *out = ApplyExifOrientation(std::move(*out), orientation);
}

}  // namespace

Image DecodeJpegRegion(std::string_view jpeg, const std::string& path,
                       const JpegRegionOptions& options, int* scale, PixelBox* box) {
  Image out;
  DecodeRegion(jpeg, path, options, /*entropy_only=*/false, &out, scale, box);
  return out;
}

void DecodeJpegRegionInto(std::string_view jpeg, const std::string& path,
                          const JpegRegionOptions& options, Image* out, int* scale,
                          PixelBox* box) {
  DecodeRegion(jpeg, path, options, /*entropy_only=*/false, out, scale, box);
}

void EntropyDecodeJpeg(std::string_view jpeg, const std::string& path,
                       const JpegRegionOptions& options) {
  Image unused;
  DecodeRegion(jpeg, path, options, /*entropy_only=*/true, &unused, nullptr, nullptr);
}

}  // namespace imgpipe
