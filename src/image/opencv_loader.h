// Loads libimgpipe_opencv.so (opencv_module_abi.h) the first time a file needs OpenCV's
// codecs. Looked for, in order: $IMGPIPE_OPENCV_MODULE (a path), the folder of the
// program or shared object this code is linked into (an installed imgpipe, the Python
// package), that folder's ../lib/imgpipe/, and the build tree's lib/ folder.
#pragma once

#include <string>

#include "image/opencv_module_abi.h"

namespace imgpipe {

struct OpenCvModule {
  std::string path;  // the file loaded
  decltype(&imgpipe_cv_imdecode) imdecode = nullptr;
  decltype(&imgpipe_cv_release) release = nullptr;
};

// The module, loaded once per process (thread-safe; later calls return the same). Throws
// Error naming every path tried and why each failed (a missing OpenCV library included)
// when none loads, again on each call.
const OpenCvModule& LoadOpenCvModule();

}  // namespace imgpipe
