// Loading shared libraries by soname at run time, so the doctor runs on machines
// without CUDA, and tests can hand it fake libraries.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace imgpipe::env {

// One loaded shared library. Unloaded when destroyed.
class LoadedLibrary {
 public:
  virtual ~LoadedLibrary() = default;
  // The address of the exported symbol `name`, or nullptr when there is none.
  virtual void* Symbol(const std::string& name) const = 0;
  // The file it was loaded from ("" when unknown).
  virtual std::string Path() const = 0;

  // Symbol(name) as a function pointer of type F (nullptr when missing).
  template <typename F>
  F Function(const std::string& name) const {
    return reinterpret_cast<F>(Symbol(name));
  }
};

class LibraryLoader {
 public:
  virtual ~LibraryLoader() = default;
  // Loads `soname` ("libcudnn.so.9") the way the dynamic linker would find it; nullptr
  // when it cannot, with the reason in *error.
  virtual std::unique_ptr<LoadedLibrary> Open(const std::string& soname, std::string* error) = 0;
};

// The real loader: dlopen(RTLD_NOW | RTLD_LOCAL) and dlsym.
class DlopenLibraryLoader : public LibraryLoader {
 public:
  std::unique_ptr<LoadedLibrary> Open(const std::string& soname, std::string* error) override;
};

// The first of `sonames` that loads.
struct FirstLoadedLibrary {
  std::unique_ptr<LoadedLibrary> library;  // nullptr when none loaded
  std::string soname;                      // the one that loaded
  std::vector<std::string> tried;          // every soname tried, in order
  // Why none loaded: the first failure, or the first one that was not a missing file.
  std::string error;
  bool error_is_missing_file = false;
};
// Tries `sonames` in order and keeps the first that loads.
FirstLoadedLibrary OpenFirstLibrary(LibraryLoader& loader, const std::vector<std::string>& sonames);

}  // namespace imgpipe::env
