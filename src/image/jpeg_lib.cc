#include "image/jpeg_lib.h"

#include <cstdlib>

namespace imgpipe {
namespace {

[[noreturn]] void JumpWithMessage(j_common_ptr cinfo) {
  auto* errors = reinterpret_cast<LibjpegErrors*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, errors->message);
  std::longjmp(errors->jump, 1);
}

void EmitMessage(j_common_ptr cinfo, int level) {
  if (level < 0) JumpWithMessage(cinfo);  // trace messages (level >= 0) are ignored
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
