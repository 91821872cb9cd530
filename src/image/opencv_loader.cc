#include "image/opencv_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

#include "util/error.h"
#include "util/shared_library.h"

namespace imgpipe {
namespace {

constexpr char kModuleName[] = "libimgpipe_opencv.so";

// Where to look, in order (opencv_loader.h).
std::vector<std::string> Candidates() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("IMGPIPE_OPENCV_MODULE"); env != nullptr && *env != '\0') {
    paths.push_back(env);
  }
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&LoadOpenCvModule), &info) != 0 && info.dli_fname) {
    const std::filesystem::path self = std::filesystem::weakly_canonical(info.dli_fname);
    paths.push_back((self.parent_path() / kModuleName).string());
    paths.push_back((self.parent_path() / ".." / "lib" / "imgpipe" / kModuleName).string());
  }
#ifdef IMGPIPE_MODULE_BUILD_DIR
  paths.push_back(std::string(IMGPIPE_MODULE_BUILD_DIR) + "/" + kModuleName);
#endif
  return paths;
}

// Loads the module at `path`, or returns false with `why` set.
bool TryLoad(const std::string& path, OpenCvModule* module, std::string* why) {
  if (!std::filesystem::exists(path)) {
    *why = "not found";
    return false;
  }
  try {
    const SharedLibrary lib(path, "decodes PNG, WebP, TIFF, BMP, PNM and JPEG 2000");
    lib.Load(&module->imdecode, "imgpipe_cv_imdecode");
    lib.Load(&module->release, "imgpipe_cv_release");
    if (lib.Function<decltype(&imgpipe_cv_abi_version)>("imgpipe_cv_abi_version")() !=
        IMGPIPE_OPENCV_ABI_VERSION) {
      throw Error("not a module of this imgpipe (interface version " +
                  std::to_string(IMGPIPE_OPENCV_ABI_VERSION) + " expected)");
    }
  } catch (const Error& e) {
    *why = e.what();
    return false;
  }
  module->path = path;
  return true;  // never closed: decoders may run until the process exits
}

}  // namespace

const OpenCvModule& LoadOpenCvModule() {
  // call_once: a throw leaves the flag unset, so the next call tries again.
  static std::once_flag once;
  static OpenCvModule module;  // written once, inside call_once
  std::call_once(once, [] {
    std::string tried;
    for (const std::string& path : Candidates()) {
      std::string why;
      if (TryLoad(path, &module, &why)) return;
      tried += "\n  " + path + ": " + why;
    }
    throw Error(std::string("cannot load ") + kModuleName +
                ", which decodes PNG, WebP, TIFF, BMP, PNM and JPEG 2000 through OpenCV "
                "(install it beside imgpipe, or set IMGPIPE_OPENCV_MODULE to its path); tried:" +
                tried);
  });
  return module;
}

}  // namespace imgpipe
