// libheif, loaded with dlopen (libheif.so.1) at the first HEIF or AVIF file, so that a
// process that never reads one never maps it nor its codecs (x265, libde265, libaom,
// dav1d). Only heif_decoder.cc calls libheif, through this table.
#pragma once

#include <libheif/heif.h>

namespace imgpipe {

struct HeifLibrary {
  decltype(&heif_context_alloc) context_alloc = nullptr;
  decltype(&heif_context_free) context_free = nullptr;
  decltype(&heif_context_read_from_memory_without_copy) context_read_from_memory_without_copy =
      nullptr;
  decltype(&heif_context_get_primary_image_handle) context_get_primary_image_handle = nullptr;
  decltype(&heif_image_handle_release) image_handle_release = nullptr;
  decltype(&heif_image_handle_get_width) image_handle_get_width = nullptr;
  decltype(&heif_image_handle_get_height) image_handle_get_height = nullptr;
  decltype(&heif_image_handle_has_alpha_channel) image_handle_has_alpha_channel = nullptr;
  decltype(&heif_decode_image) decode_image = nullptr;
  decltype(&heif_image_release) image_release = nullptr;
  decltype(&heif_image_get_plane_readonly) image_get_plane_readonly = nullptr;
  decltype(&heif_image_get_width) image_get_width = nullptr;
  decltype(&heif_image_get_height) image_get_height = nullptr;
};

// libheif's functions, loaded and heif_init'ed once per process (thread-safe; later calls
// return the same table). Throws Error naming libheif.so.1 and why it did not load, again
// at each call.
const HeifLibrary& Heif();

}  // namespace imgpipe
