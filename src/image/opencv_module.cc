// libimgpipe_opencv.so: cv::imdecode behind opencv_module_abi.h. Nothing of imgpipe's
// own is linked in; decode_opencv.cc turns what this returns into Pillow's pixels.
#include <algorithm>
#include <cstring>
#include <exception>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "image/opencv_module_abi.h"

namespace {

void CopyError(const char* message, char* error, size_t error_size) {
  if (error_size == 0) return;
  const size_t n = std::min(std::strlen(message), error_size - 1);
  std::memcpy(error, message, n);
  error[n] = '\0';
}

int FlagsOf(int mode) {
  switch (mode) {
    case kImgpipeCvGray:
      return cv::IMREAD_GRAYSCALE | cv::IMREAD_IGNORE_ORIENTATION;
    case kImgpipeCvUnchanged:
      return cv::IMREAD_UNCHANGED;
    default:
      return cv::IMREAD_COLOR | cv::IMREAD_IGNORE_ORIENTATION;
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int imgpipe_cv_abi_version(void) {
  return IMGPIPE_OPENCV_ABI_VERSION;
}

extern "C" __attribute__((visibility("default"))) int imgpipe_cv_imdecode(
    const char* bytes, size_t size, int mode, int keep_depth, ImgpipeCvImage* image, char* error,
    size_t error_size) {
  try {
    cv::Mat buffer(1, static_cast<int>(size), CV_8UC1, const_cast<char*>(bytes));
    cv::Mat mat = cv::imdecode(buffer, FlagsOf(mode));
    if (mat.empty()) return kImgpipeCvEmpty;
    if (!keep_depth && mat.depth() != CV_8U) {  // IMREAD_COLOR gives 8 bits
      cv::Mat narrow;
      const double scale = mat.depth() == CV_16U ? 1.0 / 257 : mat.depth() >= CV_32F ? 255.0 : 1.0;
      mat.convertTo(narrow, CV_8U, scale);
      mat = narrow;
    }
    auto* owned = new cv::Mat(mat);
    image->rows = owned->rows;
    image->cols = owned->cols;
    image->channels = owned->channels();
    image->depth = owned->depth() == CV_8U    ? kImgpipeCvDepth8U
                   : owned->depth() == CV_32F ? kImgpipeCvDepth32F
                                              : kImgpipeCvDepthOther;
    image->step = owned->step[0];
    image->data = owned->data;
    image->handle = owned;
    return kImgpipeCvDecoded;
  } catch (const cv::Exception& e) {
    CopyError(e.err.c_str(), error, error_size);
  } catch (const std::exception& e) {
    CopyError(e.what(), error, error_size);
  } catch (...) {
    CopyError("unknown error", error, error_size);
  }
  return kImgpipeCvFailed;
}

extern "C" __attribute__((visibility("default"))) void imgpipe_cv_release(ImgpipeCvImage* image) {
  delete static_cast<cv::Mat*>(image->handle);
  image->handle = nullptr;
  image->data = nullptr;
}
