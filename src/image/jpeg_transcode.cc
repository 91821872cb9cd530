#include "image/jpeg_transcode.h"

#include <cstring>

#include "image/codec.h"
#include "image/codec_internal.h"
#include "image/jpeg_lib.h"
#include "image/jpeg_markers.h"
#include "util/error.h"
#include "util/logging.h"

namespace imgpipe {
namespace {

bool HasSignature(const jpeg_saved_marker_ptr marker, const char* signature) {
  const size_t n = std::strlen(signature) + 1;  // with its terminating zero
  return marker->data_length >= n && std::memcmp(marker->data, signature, n) == 0;
}

// Copies the saved APPn and COM segments of `in` to `out`, but the JFIF (APP0) and
// Adobe (APP14) ones that libjpeg writes itself for `out` (as jpegtran does).
void CopyMarkers(jpeg_decompress_struct& in, jpeg_compress_struct& out) {
  for (jpeg_saved_marker_ptr m = in.marker_list; m != nullptr; m = m->next) {
    if (out.write_JFIF_header && m->marker == JPEG_APP0 && HasSignature(m, "JFIF")) continue;
    if (out.write_Adobe_marker && m->marker == JPEG_APP0 + 14 && m->data_length >= 5 &&
        std::memcmp(m->data, "Adobe", 5) == 0) {
      continue;
    }
    jpeg_write_marker(&out, m->marker, m->data, m->data_length);
  }
}

// The rewrite itself, unchecked; kept by design or failed as AddJpegRestartMarkers
// says. Throws DataError where libjpeg cannot read `jpeg`.
JpegRestartRewrite Rewrite(std::string_view jpeg, const std::string& path, int interval) {
  LibjpegDecompressor d;
  LibjpegCompressor c;
  if (setjmp(d.errors.jump) != 0) throw DataError(path, std::nullopt, JpegReason(d.errors.message));
  if (setjmp(c.errors.jump) != 0) {
    return {std::nullopt, std::string("cannot rewrite the JPEG: ") + c.errors.message};
  }
  // 1. The header, keeping every APPn and COM segment.
  jpeg_mem_src(&d.cinfo, reinterpret_cast<const unsigned char*>(jpeg.data()), jpeg.size());
  jpeg_save_markers(&d.cinfo, JPEG_COM, 0xFFFF);
  for (int m = 0; m < 16; ++m) jpeg_save_markers(&d.cinfo, JPEG_APP0 + m, 0xFFFF);
  jpeg_read_header(&d.cinfo, TRUE);
  const J_COLOR_SPACE space = d.cinfo.jpeg_color_space;
  if (space == JCS_CMYK || space == JCS_YCCK || d.cinfo.arith_code ||
      (!d.cinfo.progressive_mode && static_cast<int>(d.cinfo.restart_interval) == interval)) {
    return {};
  }
  // 2. The coefficients, written out again with the restart interval.
  jvirt_barray_ptr* coefficients = jpeg_read_coefficients(&d.cinfo);
  jpeg_copy_critical_parameters(&d.cinfo, &c.cinfo);
  c.cinfo.restart_interval = static_cast<unsigned int>(interval);
  c.cinfo.optimize_coding = TRUE;
  jpeg_write_coefficients(&c.cinfo, coefficients);
  CopyMarkers(d.cinfo, c.cinfo);
  jpeg_finish_compress(&c.cinfo);
  jpeg_finish_decompress(&d.cinfo);
  return {std::string(reinterpret_cast<const char*>(c.output), c.output_size), ""};
}

}  // namespace

JpegRestartRewrite AddJpegRestartMarkers(std::string_view jpeg, const std::string& path,
                                         int interval, uint64_t max_pixels) {
  if (interval < 1 || interval > kMaxJpegRestartInterval) {
    throw Error("restart interval must be 1 to " + std::to_string(kMaxJpegRestartInterval) +
                " MCUs, not " + std::to_string(interval));
  }
  // 1. The checks DecodeImage makes (format, process, size), with its messages, and the
  //    end of the data (even a file kept as it is must be whole).
  ReadJpegImageInfo(jpeg, path, max_pixels);
  if (!HasEoiAfterScan(jpeg)) {
    throw DataError(path, std::nullopt, "truncated JPEG data (premature end of file)");
  }
  // 2. The rewrite; kept by design when it was not needed.
  JpegRestartRewrite rewrite = Rewrite(jpeg, path, interval);
  if (!rewrite.jpeg && rewrite.failure.empty()) return rewrite;
  // 3. The input decodes (else a DataError: it is refused, rewrite or not), and the
  //    rewrite to the same pixels; a failed or different rewrite keeps the input.
  DecodeOptions decode;
  decode.max_pixels = max_pixels;
  const Image before = DecodeImage(jpeg, path, decode);
  if (rewrite.jpeg) {
    const Image after = DecodeImage(*rewrite.jpeg, path + " (rewritten with restart markers)", decode);
    if (after.width != before.width || after.height != before.height ||
        after.channels != before.channels || after.pixels != before.pixels) {
      rewrite = {std::nullopt, "the rewritten JPEG decodes to other pixels"};
    }
  }
  if (!rewrite.jpeg) LogWarning(path + ": stored without restart markers: " + rewrite.failure);
  return rewrite;
}

}  // namespace imgpipe
