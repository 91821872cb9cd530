// Shared libraries opened with dlopen when first needed (libcurl, libheif, imgpipe's
// OpenCV module), so that a process that never needs one never maps it nor what it
// pulls in. Opened RTLD_NOW | RTLD_LOCAL and never closed.
#pragma once

#include <mutex>
#include <string>

namespace imgpipe {

// The handle of `file` (a path, or a soname the dynamic loader searches for), or nullptr
// with *error set to the loader's reason.
void* OpenSharedLibrary(const std::string& file, std::string* error);

// The address of `symbol` in `handle` (opened from `file`); throws Error naming both
// when it is missing.
void* SharedLibrarySymbol(void* handle, const std::string& file, const char* symbol);

// An opened library whose functions are looked up by name.
class SharedLibrary {
 public:
  // Opens `file`, or throws Error "cannot load FILE, which PURPOSE: REASON".
  SharedLibrary(std::string file, const std::string& purpose);

  // The function `symbol` as type F; throws Error naming the library and the symbol.
  template <typename F>
  F Function(const char* symbol) const {
    return reinterpret_cast<F>(SharedLibrarySymbol(handle_, file_, symbol));
  }

  // Sets `*function` to Function<F>(symbol).
  template <typename F>
  void Load(F* function, const char* symbol) const {
    *function = Function<F>(symbol);
  }

 private:
  std::string file_;
  void* handle_ = nullptr;
};

// The function table `Table` that `fill` loads from `file` (see SharedLibrary), loaded
// once per process and Table type; thread-safe. A throw (the library or a symbol
// missing) leaves it unloaded, so the next call tries again and throws again. The
// library stays loaded: its functions may be running until the process exits.
template <typename Table>
const Table& LoadOnce(const char* file, const char* purpose,
                      void (*fill)(const SharedLibrary& library, Table* table)) {
  static std::once_flag once;
  static Table loaded;  // written once, inside call_once
  std::call_once(once, [&] {
    const SharedLibrary library(file, purpose);
    Table table;
    fill(library, &table);
    loaded = table;
  });
  return loaded;
}

}  // namespace imgpipe
