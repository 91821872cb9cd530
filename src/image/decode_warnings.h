// Warnings of decodes that succeeded: damage a decoder reports and imgpipe accepts
// because every pixel is still decoded as the encoder wrote it (libjpeg's "extraneous
// bytes before marker", a bad CRC in a PNG's ancillary chunk). The rules for what is
// accepted are with each decoder: IsFatalJpegWarning (jpeg_lib.h) for JPEG,
// DecodeWithOpenCv (codec.cc) for the other formats.
//
// Each decode that accepted warnings counts once in a process-wide counter, and the
// first such decode of each path logs one line (LogWarning). Thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace imgpipe {

// Counts one decode of `path` that accepted `count` (>= 1) warnings, the first of them
// `first` (a reason, "corrupt JPEG data: 2 extraneous bytes before marker 0xdb"); logs
// "PATH: decoded despite N warning(s), the first: FIRST" when it is the first for `path`.
void ReportDecodeWarnings(const std::string& path, int count, const std::string& first);

// Decodes that accepted warnings since the process started (each call above counts 1).
uint64_t DecodeWarningCount();
// The same, made on the calling thread: a pipeline stage counts its own from it.
uint64_t ThreadDecodeWarningCount();

}  // namespace imgpipe
