// A small labelled TFRecord data set (imgpipe synth + convert, as `make demo` does) for
// the training tests: 4 classes x 16 images of 48x48, train 75% / validation 25%, two
// shards per split.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "convert/converter.h"
#include "convert/synth_dataset.h"
#include "util/file.h"

namespace imgpipe::train {

// Makes the data set once per test binary; returns its folder.
inline const std::string& SmallTrainingSet() {
  static const std::string dir = [] {
    std::string root = JoinPath(::testing::TempDir(), "train_data_" + std::to_string(::getpid()));
    SynthOptions synth;
    synth.out_dir = JoinPath(root, "images");
    synth.classes = 4;
    synth.per_class = 16;
    synth.width = synth.height = 48;
    synth.threads = 1;
    WriteSynthDataset(synth);
    ConvertOptions convert;
    convert.input = synth.out_dir;
    convert.output = JoinPath(root, "shards");
    convert.plan.splits = {{"train", 0.75}, {"validation", 0.25}};
    convert.plan.min_shards = 2;
    convert.threads = 1;
    RunConvert(convert);
    return convert.output;
  }();
  return dir;
}

}  // namespace imgpipe::train
