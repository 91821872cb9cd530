// The names of the image classifiers models.h makes, without libtorch: the CLI lists them.
#pragma once

#include <string>
#include <vector>

namespace imgpipe::train {

// The names MakeImageClassifier knows, in the order --help lists them.
const std::vector<std::string>& ImageClassifierNames();

}  // namespace imgpipe::train
