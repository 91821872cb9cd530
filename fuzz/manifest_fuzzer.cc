// Fuzzes the manifest parser (CSV and JSON Lines; the first byte picks which). What it
// accepts must be a usable input list: every label indexes class_names, every image
// has a path and a name, sorted by name.
#include <cstdint>

#include "fuzz_util.h"
#include "pipeline/input_list.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgpipe;
  if (size == 0) return 0;
  const bool is_csv = (data[0] & 1) == 0;
  const std::string_view text = fuzz::AsView(data + 1, size - 1);
  fuzz::IgnoringErrors([&] {
    InputList list = ParseManifest(text, is_csv, "/data", is_csv ? "fuzz.csv" : "fuzz.jsonl");
    FUZZ_CHECK(!list.images.empty());
    for (size_t i = 0; i < list.images.size(); ++i) {
      const InputImage& image = list.images[i];
      FUZZ_CHECK(image.label >= 0 && static_cast<size_t>(image.label) < list.class_names.size());
      FUZZ_CHECK(!image.path.empty() && !image.name.empty());
      if (i > 0) FUZZ_CHECK(list.images[i - 1].name <= image.name);
    }
  });
  return 0;
}
