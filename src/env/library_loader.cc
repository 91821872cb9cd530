#include "env/library_loader.h"

#include <dlfcn.h>
#include <link.h>

namespace imgpipe::env {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

class DlopenLibrary : public LoadedLibrary {
 public:
  explicit DlopenLibrary(void* handle) : handle_(handle) {}
  // Under AddressSanitizer the library stays loaded, so that LeakSanitizer can name it
  // when it leaks at load time (third-party leaks: scripts/lsan.supp).
  ~DlopenLibrary() override {
    if (!kAddressSanitizer) ::dlclose(handle_);
  }

  void* Symbol(const std::string& name) const override { return ::dlsym(handle_, name.c_str()); }

  std::string Path() const override {
    struct link_map* map = nullptr;
    if (::dlinfo(handle_, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr) {
      return "";
    }
    return map->l_name;
  }

 private:
  void* handle_;
};

}  // namespace

std::unique_ptr<LoadedLibrary> DlopenLibraryLoader::Open(const std::string& soname,
                                                         std::string* error) {
  void* handle = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = ::dlerror();
    if (error) *error = reason ? reason : soname + ": cannot be loaded";
    return nullptr;
  }
  return std::make_unique<DlopenLibrary>(handle);
}

FirstLoadedLibrary OpenFirstLibrary(LibraryLoader& loader,
                                    const std::vector<std::string>& sonames) {
  FirstLoadedLibrary result;
  for (const std::string& soname : sonames) {
    result.tried.push_back(soname);
    std::string error;
    result.library = loader.Open(soname, &error);
    if (result.library) {
      result.soname = soname;
      result.error.clear();
      return result;
    }
    // Keep the first reason, unless a later library exists but fails to load (a missing
    // dependency or symbol): that one says more.
    bool missing = error.find("cannot open shared object file") != std::string::npos;
    if (result.error.empty() || (!missing && result.error_is_missing_file)) {
      result.error = error;
      result.error_is_missing_file = missing;
    }
  }
  return result;
}

}  // namespace imgpipe::env
