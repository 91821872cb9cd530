#include "image/heif_library.h"

#include <mutex>
#include <string>

#include "util/error.h"
#include "util/shared_library.h"

namespace imgpipe {
namespace {

constexpr char kLibheif[] = "libheif.so.1";

// `name` from libheif's `handle` as a `T`.
template <typename T>
T Symbol(void* handle, const char* name) {
  return SharedLibraryFunction<T>(handle, kLibheif, name);
}

}  // namespace

const HeifLibrary& Heif() {
  // call_once: a throw leaves the flag unset, so the next call tries again.
  static std::once_flag once;
  static HeifLibrary heif;  // written once, inside call_once
  std::call_once(once, [] {
    std::string error;
    void* handle = OpenSharedLibrary(kLibheif, &error);
    if (handle == nullptr) {
      throw Error(std::string("cannot load ") + kLibheif + ", which decodes HEIF and AVIF " +
                  "(Debian: apt-get install libheif1): " + error);
    }
    HeifLibrary h;
    h.context_alloc = Symbol<decltype(h.context_alloc)>(handle, "heif_context_alloc");
    h.context_free = Symbol<decltype(h.context_free)>(handle, "heif_context_free");
    h.context_read_from_memory_without_copy =
        Symbol<decltype(h.context_read_from_memory_without_copy)>(
            handle, "heif_context_read_from_memory_without_copy");
    h.context_get_primary_image_handle = Symbol<decltype(h.context_get_primary_image_handle)>(
        handle, "heif_context_get_primary_image_handle");
    h.image_handle_release =
        Symbol<decltype(h.image_handle_release)>(handle, "heif_image_handle_release");
    h.image_handle_get_width =
        Symbol<decltype(h.image_handle_get_width)>(handle, "heif_image_handle_get_width");
    h.image_handle_get_height =
        Symbol<decltype(h.image_handle_get_height)>(handle, "heif_image_handle_get_height");
    h.image_handle_has_alpha_channel = Symbol<decltype(h.image_handle_has_alpha_channel)>(
        handle, "heif_image_handle_has_alpha_channel");
    h.decode_image = Symbol<decltype(h.decode_image)>(handle, "heif_decode_image");
    h.image_release = Symbol<decltype(h.image_release)>(handle, "heif_image_release");
    h.image_get_plane_readonly =
        Symbol<decltype(h.image_get_plane_readonly)>(handle, "heif_image_get_plane_readonly");
    h.image_get_width = Symbol<decltype(h.image_get_width)>(handle, "heif_image_get_width");
    h.image_get_height = Symbol<decltype(h.image_get_height)>(handle, "heif_image_get_height");
    auto init = Symbol<decltype(&heif_init)>(handle, "heif_init");
    const heif_error status = init(nullptr);
    if (status.code != heif_error_Ok) {
      throw Error(std::string(kLibheif) + ": heif_init failed: " + status.message);
    }
    heif = h;
  });
  return heif;
}

}  // namespace imgpipe
