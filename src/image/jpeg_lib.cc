#include "image/jpeg_lib.h"

#include <cstdlib>

// jerror.h needs jpeglib.h (in jpeg_lib.h) first.
#include <jerror.h>

#include "image/codec_internal.h"
#include "image/decode_warnings.h"

#ifdef IMGPIPE_LIBJPEG_STDERR_SHIM
// The `stderr` of the libjpeg.a copy linked in (src/image/CMakeLists.txt): its default
// output_message prints there. Hidden, so it resolves inside the shared object too.
extern "C" __attribute__((visibility("hidden"))) FILE* imgpipe_libjpeg_stderr = stderr;
#endif

namespace imgpipe {
namespace {

[[noreturn]] void JumpWithMessage(j_common_ptr cinfo) {
  auto* errors = reinterpret_cast<LibjpegErrors*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, errors->message);
  std::longjmp(errors->jump, 1);
}

void EmitMessage(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace messages
  if (IsFatalJpegWarning(cinfo->err->msg_code)) JumpWithMessage(cinfo);
  auto* errors = reinterpret_cast<LibjpegErrors*>(cinfo->err);
  if (errors->warnings++ == 0) (*cinfo->err->format_message)(cinfo, errors->first_warning);
}

void LimitScans(j_common_ptr cinfo) {
  if (cinfo->is_decompressor == 0) return;
  auto* dinfo = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (dinfo->input_scan_number > kMaxProgressiveScans) {
    auto* errors = reinterpret_cast<LibjpegErrors*>(cinfo->err);
    std::snprintf(errors->message, sizeof errors->message,
                  "Progressive JPEG image has more than %d scans", kMaxProgressiveScans);
    std::longjmp(errors->jump, 1);
  }
}

// Points libjpeg's error manager of `errors` at the callbacks above.
jpeg_error_mgr* InstallErrors(LibjpegErrors& errors) {
  jpeg_error_mgr* manager = jpeg_std_error(&errors.manager);
  errors.manager.error_exit = JumpWithMessage;
  errors.manager.emit_message = EmitMessage;
  errors.progress.progress_monitor = LimitScans;
  return manager;
}

}  // namespace

bool IsFatalJpegWarning(int msg_code) {
  switch (msg_code) {
    case JWRN_EXTRANEOUS_DATA:
    case JWRN_JFIF_MAJOR:
    case JWRN_ADOBE_XFORM:
    case JWRN_BOGUS_ICC:
    case JWRN_NOT_SEQUENTIAL:
    case JWRN_BOGUS_PROGRESSION:
    case JWRN_HUFF_BAD_CODE:
    case JWRN_ARITH_BAD_CODE:
    case JWRN_MUST_RESYNC:
    case JWRN_HIT_MARKER:
      return false;
    default:  // JWRN_JPEG_EOF, JWRN_TOO_MUCH_DATA, and any other
      return true;
  }
}

void ReportAcceptedWarnings(const LibjpegErrors& errors, const std::string& path) {
  if (errors.warnings > 0) {
    ReportDecodeWarnings(path, errors.warnings, JpegReason(errors.first_warning));
  }
}

LibjpegDecompressor::LibjpegDecompressor() {
  cinfo.err = InstallErrors(errors);
  jpeg_create_decompress(&cinfo);  // only fails on out of memory, which error_exit reports
  cinfo.progress = &errors.progress;
}

LibjpegDecompressor::~LibjpegDecompressor() { jpeg_destroy_decompress(&cinfo); }

LibjpegCompressor::LibjpegCompressor() {
  cinfo.err = InstallErrors(errors);
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, &output, &output_size);
}

LibjpegCompressor::~LibjpegCompressor() {
  jpeg_destroy_compress(&cinfo);
  std::free(output);
}

}  // namespace imgpipe
