// loader_batches DATA OUT [name=value ...]: one epoch of the C++ pipeline that
// imgpipe.Loader builds for these options (loader/loader_options.h, rank_plan.h), written
// as OUT.images (the batches' pixels back to back), OUT.labels (int64 per sample) and
// OUT.sizes (int64 per batch), for test_loader_equals_pipeline.py to compare with the
// Loader's batches. Options as Loader's keywords; `epoch=E` picks the epoch. Exits 1
// with the error on stderr.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <type_traits>

#include "loader/loader_options.h"
#include "loader/rank_plan.h"
#include "util/error.h"

namespace imgpipe::loader {
namespace {

// `text` as the option's type.
template <typename T>
void ParseValue(const std::string& text, T& field) {
  if constexpr (std::is_same_v<T, std::string>) {
    field = text;
  } else if constexpr (std::is_same_v<T, bool>) {
    field = text == "1" || text == "true" || text == "True";
  } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
    field = text;
  } else if constexpr (std::is_same_v<T, std::optional<bool>>) {
    field = text == "1" || text == "true" || text == "True";
  } else if constexpr (std::is_same_v<T, std::optional<int64_t>>) {
    field = std::stoll(text);
  } else if constexpr (std::is_floating_point_v<T>) {
    field = static_cast<T>(std::stod(text));
  } else {
    field = static_cast<T>(std::stoll(text));
  }
}

// Sets the option `name=value` of `arg`; throws Error for an unknown name.
void SetOption(LoaderOptions& o, const std::string& arg) {
  const size_t eq = arg.find('=');
  if (eq == std::string::npos) throw Error("expected name=value, got '" + arg + "'");
  bool found = false;
  ForEachOption(o, [&](const OptionSpec& spec, auto& field) {
    if (arg.substr(0, eq) != spec.name) return;
    ParseValue(arg.substr(eq + 1), field);
    found = true;
  });
  if (!found) throw Error("unknown option '" + arg.substr(0, eq) + "'");
}

void WriteEpoch(const std::string& data, const std::string& out, LoaderOptions o, uint64_t epoch) {
  CheckOptions(o);
  const LoaderData loader_data = ResolveLoaderData(data, DataSourceOptionsOf(o), o.split,
                                                   ParseErrorPolicy(o.error_policy));
  const RankPlan plan = PlanRank(loader_data, o);
  auto it = BuildBatches(loader_data, o, plan).MakeIterator(PipelineOptionsOf(o), epoch);
  std::ofstream images(out + ".images", std::ios::binary), labels(out + ".labels", std::ios::binary),
      sizes(out + ".sizes", std::ios::binary);
  for (int64_t i = 0; i < plan.batches; ++i) {
    std::optional<pipeline::Batch> batch = it.Next();
    if (!batch) throw Error("the pipeline ended after " + std::to_string(i) + " batches");
    images.write(reinterpret_cast<const char*>(batch->data.data()),
                 static_cast<std::streamsize>(batch->size * batch->sample_bytes));
    labels.write(reinterpret_cast<const char*>(batch->labels.data()),
                 static_cast<std::streamsize>(batch->labels.size() * sizeof(int64_t)));
    const auto size = static_cast<int64_t>(batch->size);
    sizes.write(reinterpret_cast<const char*>(&size), sizeof(size));
  }
  if (!images || !labels || !sizes) throw Error("cannot write " + out + ".*");
}

}  // namespace
}  // namespace imgpipe::loader

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: loader_batches DATA OUT [name=value ...] [epoch=E]\n";
    return 2;
  }
  try {
    imgpipe::loader::LoaderOptions o;
    uint64_t epoch = 0;
    for (int i = 3; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg.rfind("epoch=", 0) == 0) {
        epoch = std::stoull(arg.substr(6));
      } else {
        imgpipe::loader::SetOption(o, arg);
      }
    }
    imgpipe::loader::WriteEpoch(argv[1], argv[2], o, epoch);
  } catch (const std::exception& e) {
    std::cerr << "loader_batches: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
