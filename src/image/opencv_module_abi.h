// The C interface of libimgpipe_opencv.so, the one file that links OpenCV
// (opencv_module.cc). imgpipe loads it with dlopen when a file first needs OpenCV's
// codecs (opencv_loader.h), so that programs that never decode PNG, WebP, TIFF, BMP,
// PNM or JPEG 2000 never map OpenCV and the libraries it pulls in (GDAL among them).
// Plain C types only: the module and its user agree on nothing else.
#pragma once

#include <stddef.h>

extern "C" {

// Bump when anything below changes; the loader refuses a module of another version.
#define IMGPIPE_OPENCV_ABI_VERSION 1

// How imgpipe_cv_imdecode reads the file (cv::imdecode's flags).
enum ImgpipeCvMode {
  kImgpipeCvColor = 0,      // IMREAD_COLOR | IMREAD_IGNORE_ORIENTATION: 8-bit BGR
  kImgpipeCvGray = 1,       // IMREAD_GRAYSCALE | IMREAD_IGNORE_ORIENTATION: 8-bit gray
  kImgpipeCvUnchanged = 2,  // IMREAD_UNCHANGED: as stored (depth and channels)
};

// The sample type of a decoded image.
enum ImgpipeCvDepth {
  kImgpipeCvDepth8U = 0,
  kImgpipeCvDepth32F = 1,
  kImgpipeCvDepthOther = 2,
};

// A decoded image, owned by the module until imgpipe_cv_release.
struct ImgpipeCvImage {
  int rows;
  int cols;
  int channels;
  int depth;             // ImgpipeCvDepth
  size_t step;           // bytes from one row to the next
  unsigned char* data;   // rows x step bytes, writable
  void* handle;          // the module's own (a cv::Mat)
};

// What imgpipe_cv_imdecode returns.
enum ImgpipeCvResult {
  kImgpipeCvDecoded = 0,   // *image holds the image: release it
  kImgpipeCvEmpty = 1,     // OpenCV decoded nothing (corrupt, truncated, or not its format)
  kImgpipeCvFailed = 2,    // OpenCV threw: `error` holds its message
};

// IMGPIPE_OPENCV_ABI_VERSION of the module.
int imgpipe_cv_abi_version(void);

// cv::imdecode of `size` bytes in `mode`, narrowed to 8 bits unless `keep_depth` (16-bit
// samples by 1/257, floats by 255). `error` (NUL-terminated, cut to `error_size`) is set
// on kImgpipeCvFailed. Never throws.
int imgpipe_cv_imdecode(const char* bytes, size_t size, int mode, int keep_depth,
                        struct ImgpipeCvImage* image, char* error, size_t error_size);

// Frees what imgpipe_cv_imdecode decoded into `image`.
void imgpipe_cv_release(struct ImgpipeCvImage* image);

}  // extern "C"
