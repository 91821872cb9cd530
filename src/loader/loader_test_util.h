// Helpers shared by the loader's tests.
#pragma once

#include <string>

#include "convert/converter.h"
#include "io/io_test_util.h"
#include "loader/loader.h"
#include "loader/loader_data.h"

namespace imgpipe::loader {

// 153 photos, 9 batches of 16 an epoch.
inline const std::string kPhotos = std::string(IMGPIPE_TESTDATA_DIR) + "/images/hymenoptera/val";

// The 153 photos converted once (per test binary) into 4 TFRecord shards with index
// files, resolved as a Loader resolves them.
inline const LoaderData& PhotoShards() {
  static const LoaderData data = [] {
    ConvertOptions convert;
    convert.input = ::imgpipe::loader::kPhotos;  // not a test file's own kPhotos (unity builds)
    convert.output = ScratchDir("loader_photo_shards");
    convert.plan.min_shards = 4;
    convert.threads = 2;
    RunConvert(convert);
    return ResolveLoaderData(convert.output, {}, "", ErrorPolicy::kFail);
  }();
  return data;
}

// Small batches of small uint8 images on 2 threads, seed 7.
inline LoaderOptions SmallOptions() {
  LoaderOptions o;
  o.batch_size = 16;  // 9 batches an epoch
  o.image_size = 32;
  o.layout = "uint8";
  o.threads = 2;
  o.seed = 7;
  return o;
}

// A batch as bytes: pixels, labels and marks.
inline std::string View(const LoaderBatch& b) {
  std::string v(reinterpret_cast<const char*>(b.batch->data.data()), b.batch->size * b.batch->sample_bytes);
  v.append(reinterpret_cast<const char*>(b.batch->labels.data()), b.batch->labels.size() * sizeof(int64_t));
  v.append(b.padded->begin(), b.padded->end());
  return v;
}

}  // namespace imgpipe::loader
