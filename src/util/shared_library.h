// Shared libraries opened with dlopen when first needed (libcurl, libheif, imgpipe's
// OpenCV module), so that a process that never needs one never maps it nor what it
// pulls in. Opened RTLD_NOW | RTLD_LOCAL and never closed.
#pragma once

#include <string>

namespace imgpipe {

// The handle of `file` (a path, or a soname the dynamic loader searches for), or nullptr
// with *error set to the loader's reason.
void* OpenSharedLibrary(const std::string& file, std::string* error);

// The address of `symbol` in `handle` (opened from `file`); throws Error naming both
// when it is missing.
void* SharedLibrarySymbol(void* handle, const std::string& file, const char* symbol);

// SharedLibrarySymbol as a function pointer of type F.
template <typename F>
F SharedLibraryFunction(void* handle, const std::string& file, const char* symbol) {
  return reinterpret_cast<F>(SharedLibrarySymbol(handle, file, symbol));
}

}  // namespace imgpipe
