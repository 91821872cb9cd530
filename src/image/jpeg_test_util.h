// Test helpers for JPEG layouts: what libjpeg reads from a JPEG's header (restart
// interval, progressive, MCUs per row), and TurboJPEG encodings EncodeJpeg does not make
// (progressive, CMYK, other subsamplings), and a JPEG whose restart-marker rewrite
// fails. For the region decoder, AddJpegRestartMarkers,
// the restart splice and their users.
#pragma once

#include <turbojpeg.h>

#include <csetjmp>
#include <string>
#include <string_view>
#include <vector>

#include "image/jpeg_lib.h"
#include "util/error.h"

namespace imgpipe {

// The restart interval (DRI, in MCUs; 0: none), progressive flag and MCUs in one row of
// the first scan (a one-component scan's MCU is one 8x8 block) of a JPEG.
struct JpegLayout {
  int restart_interval = 0;
  bool progressive = false;
  int mcus_per_row = 0;
};

// Reads `jpeg`'s header with libjpeg; throws Error with libjpeg's message if it cannot.
inline JpegLayout JpegLayoutOf(std::string_view jpeg) {
  LibjpegDecompressor d;
  if (setjmp(d.errors.jump) != 0) throw Error(std::string("libjpeg: ") + d.errors.message);
  jpeg_mem_src(&d.cinfo, reinterpret_cast<const unsigned char*>(jpeg.data()), jpeg.size());
  jpeg_read_header(&d.cinfo, TRUE);
  const int mcu = d.cinfo.num_components == 1 ? 8 : 8 * d.cinfo.max_h_samp_factor;
  return {static_cast<int>(d.cinfo.restart_interval), d.cinfo.progressive_mode != 0,
          (static_cast<int>(d.cinfo.image_width) + mcu - 1) / mcu};
}

// TurboJPEG encoding of raw pixels at quality 90, for variants EncodeJpeg does not make;
// throws Error with TurboJPEG's message if it fails.
inline std::string TurboEncode(const std::vector<unsigned char>& pixels, int width, int height,
                               int pixel_format, int subsampling, int flags) {
  tjhandle handle = tjInitCompress();
  unsigned char* buffer = nullptr;
  unsigned long size = 0;  // NOLINT(runtime/int): TurboJPEG's type
  int rc = tjCompress2(handle, pixels.data(), width, 0, height, pixel_format, &buffer, &size,
                       subsampling, 90, flags);
  std::string message = rc == 0 ? "" : tjGetErrorStr2(handle);
  std::string jpeg(reinterpret_cast<char*>(buffer), size);
  tjFree(buffer);
  tjDestroy(handle);
  if (rc != 0) throw Error("tjCompress2: " + message);
  return jpeg;
}

// `gray_jpeg` (one component, sequential, Huffman-coded) with its blocks' quantized DC
// coefficients replaced, in scan order, by 0, 1500, 3000, 4500, 3000, 1500, 0, ...: each
// difference is within baseline's range (2047), so it encodes and decodes (the pixels
// saturate), but a restart marker every MCU codes each DC alone, and 3000 and 4500 are
// past that range: libjpeg's encoder refuses them ("DCT coefficient out of range"), as
// it refuses some damaged camera files. Throws Error with libjpeg's message.
inline std::string WithDcPastBaselineRange(const std::string& gray_jpeg) {
  LibjpegDecompressor d;
  LibjpegCompressor c;
  if (setjmp(d.errors.jump) != 0) throw Error(std::string("reading: ") + d.errors.message);
  if (setjmp(c.errors.jump) != 0) throw Error(std::string("writing: ") + c.errors.message);
  jpeg_mem_src(&d.cinfo, reinterpret_cast<const unsigned char*>(gray_jpeg.data()), gray_jpeg.size());
  jpeg_read_header(&d.cinfo, TRUE);
  if (d.cinfo.num_components != 1) throw Error("WithDcPastBaselineRange: not a gray JPEG");
  jvirt_barray_ptr* coefficients = jpeg_read_coefficients(&d.cinfo);
  const jpeg_component_info& gray = d.cinfo.comp_info[0];
  int k = 0;
  for (JDIMENSION row = 0; row < gray.height_in_blocks; ++row) {
    JBLOCKARRAY blocks = (*d.cinfo.mem->access_virt_barray)(
        reinterpret_cast<j_common_ptr>(&d.cinfo), coefficients[0], row, 1, TRUE);
    for (JDIMENSION col = 0; col < gray.width_in_blocks; ++col, ++k) {
      const int phase = k % 6;
      blocks[0][col][0] = static_cast<JCOEF>(1500 * (phase <= 3 ? phase : 6 - phase));
    }
  }
  jpeg_copy_critical_parameters(&d.cinfo, &c.cinfo);
  jpeg_write_coefficients(&c.cinfo, coefficients);
  jpeg_finish_compress(&c.cinfo);
  jpeg_finish_decompress(&d.cinfo);
  return std::string(reinterpret_cast<const char*>(c.output), c.output_size);
}

}  // namespace imgpipe
