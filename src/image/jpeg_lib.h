// libjpeg's decompressor and compressor with the error handling imgpipe's JPEG code
// shares: libjpeg's errors and warnings jump to a setjmp the caller makes, which turns
// them into a DataError (see LibjpegJump). For the region decoder and the lossless
// transcoder; DecodeImage and EncodeJpeg use TurboJPEG instead.
#pragma once

// jpeglib.h needs size_t and FILE declared first.
#include <cstddef>
#include <cstdio>
// clang-format off
#include <jpeglib.h>
// clang-format on

#include <csetjmp>

namespace imgpipe {

// Progressive files with more scans than this are refused, as TurboJPEG's
// TJFLAG_LIMITSCANS does (DecodeImage uses it): each scan re-reads the whole image.
inline constexpr int kMaxProgressiveScans = 500;

// Where libjpeg's error callbacks jump, and the message they leave. Warnings (level -1:
// premature end of data, corrupt entropy data) count as errors, as in DecodeImage:
// libjpeg would otherwise fill the rest with grey and carry on.
struct LibjpegErrors {
  jpeg_error_mgr manager;
  jpeg_progress_mgr progress;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = {};
};

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
