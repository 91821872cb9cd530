// libjpeg's decompressor and compressor with the error handling imgpipe's JPEG code
// shares: libjpeg's errors, and the warnings IsFatalJpegWarning names, jump to a setjmp
// the caller makes, which turns them into a DataError; the other warnings are counted
// (LibjpegErrors) for the caller to report (decode_warnings.h). For the region decoder,
// the lossless transcoder, and DecodeImage where TurboJPEG met a warning; DecodeImage
// and EncodeJpeg use TurboJPEG otherwise.
#pragma once

// jpeglib.h needs size_t and FILE declared first.
#include <cstddef>
#include <cstdio>
// clang-format off
#include <jpeglib.h>
// clang-format on

#include <csetjmp>
#include <string>

namespace imgpipe {

// Progressive files with more scans than this are refused, as TurboJPEG's
// TJFLAG_LIMITSCANS does (DecodeImage uses it): each scan re-reads the whole image.
inline constexpr int kMaxProgressiveScans = 500;

// Whether libjpeg's warning `msg_code` (jerror.h's JWRN_*) makes imgpipe refuse the
// image; the one rule for every JPEG decode (DecodeImage, DecodeJpegRegion, the restart
// marker rewrite). libjpeg only warns, and carries on, both for data that is missing or
// damaged and for oddities around whole data; libjpeg-turbo's djpeg, Pillow and
// tf.io.decode_jpeg pass every warning but the end of the input (Pillow: "image file is
// truncated"), and so does imgpipe, counting and logging what it passes
// (decode_warnings.h) so that nothing is accepted silently:
// - Fatal: the file ends early (JWRN_JPEG_EOF, "premature end of JPEG file": truncated,
//   as for Pillow and TensorFlow without their recover flags), and JWRN_TOO_MUCH_DATA
//   (a caller's bug, not the data's).
// - Accepted, decoded to Pillow's pixels: bytes between segments or after a scan's data
//   (JWRN_EXTRANEOUS_DATA, "N extraneous bytes before marker 0xdb", as cameras write
//   them), an unknown JFIF version (JWRN_JFIF_MAJOR) or Adobe transform code
//   (JWRN_ADOBE_XFORM), a bad ICC profile segment (JWRN_BOGUS_ICC; imgpipe ignores
//   profiles), odd SOS parameters (JWRN_NOT_SEQUENTIAL), a progressive file's unusual
//   scan order (JWRN_BOGUS_PROGRESSION), and damaged entropy-coded data in a file that
//   is whole: a bad Huffman or arithmetic code (JWRN_HUFF_BAD_CODE,
//   JWRN_ARITH_BAD_CODE), a restart marker missing or out of order (JWRN_MUST_RESYNC), a
//   marker inside a scan's data (JWRN_HIT_MARKER, "premature end of data segment").
//   libjpeg fills what it cannot decode with grey, as Pillow shows such a file.
// - Any code this list does not name: fatal.
bool IsFatalJpegWarning(int msg_code);

// Where libjpeg's error callbacks jump, and the message they leave: errors and fatal
// warnings (IsFatalJpegWarning) jump; the other warnings are counted, the first kept.
struct LibjpegErrors {
  jpeg_error_mgr manager;
  jpeg_progress_mgr progress;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = {};
  int warnings = 0;                          // accepted warnings
  char first_warning[JMSG_LENGTH_MAX] = {};  // the first one's message
};

// Reports the warnings `errors` accepted in a decode of `path`, if any, to
// ReportDecodeWarnings (decode_warnings.h), the first as a JpegReason.
void ReportAcceptedWarnings(const LibjpegErrors& errors, const std::string& path);

// A libjpeg decompressor whose errors jump to `errors.jump` (set it with setjmp before
// any libjpeg call) and which refuses more than kMaxProgressiveScans scans; destroyed on
// scope exit.
struct LibjpegDecompressor {
  jpeg_decompress_struct cinfo;
  LibjpegErrors errors;

  LibjpegDecompressor();
  ~LibjpegDecompressor();
  LibjpegDecompressor(const LibjpegDecompressor&) = delete;
  LibjpegDecompressor& operator=(const LibjpegDecompressor&) = delete;
};

// A libjpeg compressor writing to memory (`output`, `output_size`, freed on scope exit)
// whose errors jump to `errors.jump`.
struct LibjpegCompressor {
  jpeg_compress_struct cinfo;
  LibjpegErrors errors;
  unsigned char* output = nullptr;
  unsigned long output_size = 0;  // NOLINT(runtime/int): libjpeg's type

  LibjpegCompressor();
  ~LibjpegCompressor();
  LibjpegCompressor(const LibjpegCompressor&) = delete;
  LibjpegCompressor& operator=(const LibjpegCompressor&) = delete;
};

}  // namespace imgpipe
