#include "util/shared_library.h"

#include <dlfcn.h>

#include "util/error.h"

namespace imgpipe {

void* OpenSharedLibrary(const std::string& file, std::string* error) {
  void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = ::dlerror();
    *error = reason != nullptr ? reason : "dlopen failed";
  }
  return handle;
}

void* SharedLibrarySymbol(void* handle, const std::string& file, const char* symbol) {
  ::dlerror();
  void* address = ::dlsym(handle, symbol);
  if (address == nullptr) throw Error(file + " has no symbol " + symbol);
  return address;
}

SharedLibrary::SharedLibrary(std::string file, const std::string& purpose) : file_(std::move(file)) {
  std::string error;
  handle_ = OpenSharedLibrary(file_, &error);
  if (handle_ == nullptr) throw Error("cannot load " + file_ + ", which " + purpose + ": " + error);
}

}  // namespace imgpipe
