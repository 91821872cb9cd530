// Fuzzes the manifest parser (CSV and JSON Lines; the first byte picks which). What it
// accepts must be a usable input list: every label indexes class_names, every image
// has a path and a name, sorted by name; and parsing it in small pieces (as files are
// read) gives the same list, or the same error.
#include <cstdint>

#include "fuzz_util.h"
#include "pipeline/input_list.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgpipe;
  if (size == 0) return 0;
  const bool is_csv = (data[0] & 1) == 0;
  const std::string_view text = fuzz::AsView(data + 1, size - 1);
  const size_t piece_bytes = 1 + data[0] / 2;  // 1..128
  const char* name = is_csv ? "fuzz.csv" : "fuzz.jsonl";
  std::string whole_error, pieces_error;
  try {
    InputList list = ParseManifest(text, is_csv, "/data", name);
    FUZZ_CHECK(!list.empty());
    for (size_t i = 0; i < list.size(); ++i) {
      const InputImage image = list.image(i);
      FUZZ_CHECK(image.label >= 0 && static_cast<size_t>(image.label) < list.class_names.size());
      FUZZ_CHECK(!image.path.empty() && !image.name.empty());
      if (i > 0) FUZZ_CHECK(list.name(i - 1) <= image.name);
    }
    InputList pieces = ParseManifest(text, is_csv, "/data", name, piece_bytes);
    FUZZ_CHECK(pieces.size() == list.size() && pieces.class_names == list.class_names);
    for (size_t i = 0; i < list.size(); ++i) {
      FUZZ_CHECK(pieces.name(i) == list.name(i) && pieces.label(i) == list.label(i));
    }
  } catch (const Error& e) {
    whole_error = e.what();
    try {
      ParseManifest(text, is_csv, "/data", name, piece_bytes);
    } catch (const Error& again) {
      pieces_error = again.what();
    }
    FUZZ_CHECK(pieces_error == whole_error);
  }
  return 0;
}
