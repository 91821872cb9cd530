// Fuzzes the tf.train.Example and SequenceExample decoders and the schema description
// built on them (what `imgpipe inspect` runs on every file's first record). A parsed
// Example must serialise and parse back to the same schema. Where ExampleView (the
// pipeline's in-place reader) accepts the bytes, protobuf must parse them too and give
// every feature's first bytes and int64 value alike.
#include <google/protobuf/stubs/logging.h>

#include <cstdint>

#include "fuzz_util.h"
#include "record/example.h"
#include "record/example_view.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Protobuf logs each string field that is not UTF-8 before the parse fails.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace imgpipe;
  const std::string_view bytes = fuzz::AsView(data, size);
  const std::string path = "fuzz.tfrecord";
  fuzz::IgnoringErrors([&] {
    Example example = ParseExample(bytes, path, 0);
    std::vector<FeatureDescription> schema = DescribeFeatures(example.features());
    for (const FeatureDescription& feature : schema) {
      GetBytesFeature(example.features(), feature.key);
      GetInt64Feature(example.features(), feature.key);
    }
    Example again = ParseExample(SerializeExample(example), path, 0);
    FUZZ_CHECK(DescribeFeatures(again.features()) == schema);
  });
  if (const std::optional<ExampleView> view = ExampleView::Scan(bytes)) {
    Example example;
    bool parsed = true;
    try {
      example = ParseExample(bytes, path, 0);
    } catch (const Error&) {
      parsed = false;
    }
    FUZZ_CHECK(parsed);
    for (const auto& [key, feature] : example.features().feature()) {
      FUZZ_CHECK(view->FirstBytes(key) == GetBytesFeature(example.features(), key));
      FUZZ_CHECK(view->FirstInt64(key) == GetInt64Feature(example.features(), key));
    }
  }
  fuzz::IgnoringErrors([&] {
    SequenceExample sequence = ParseSequenceExample(bytes, path, 0);
    DescribeFeatures(sequence.context());
    DescribeFeatureLists(sequence.feature_lists());
  });
  return 0;
}
