// Helpers shared by the extract tests (libtorch-free): temporary folders, test data
// (synthetic JPEG folders and their TFRecord shards, a record that does not decode),
// and Python (/usr/bin/python3 with numpy and python3-torch) for reference results.
#pragma once

#include <string>
#include <vector>

namespace imgpipe::extract {

// An empty folder under the test temp dir, unique to this process and `name`.
std::string FreshTestDir(const std::string& name);

// Writes `classes` x `per_class` synthetic JPEGs of width x height in the folder-per-class
// layout under `dir` (imgpipe synth).
void MakeSynthImages(const std::string& dir, int classes, int per_class, int width, int height);
// Converts the image folder `images` into TFRecord shards in `out` (imgpipe convert,
// one split "train", at least `min_shards` shards).
void ConvertToShards(const std::string& images, const std::string& out, int min_shards);
// Appends to the TFRecord file `path` one Example with image/filename `filename`,
// label `label` and image/encoded bytes that are not a decodable JPEG.
void AppendUndecodableRecord(const std::string& path, const std::string& filename, int64_t label);

// Whether /usr/bin/python3 can import `module` (e.g. "numpy", "torchvision").
bool PythonHas(const std::string& module);
inline bool PythonHasNumpy() { return PythonHas("numpy"); }
inline bool PythonHasTorch() { return PythonHas("torch") && PythonHas("torchvision"); }
// Runs `script` with /usr/bin/python3 and `args`; returns its stdout. A non-zero exit
// fails the current test (ADD_FAILURE) with the script's stderr.
std::string RunPython(const std::string& script, const std::vector<std::string>& args);

// A TorchScript file of torchvision's resnet18(weights=None, num_classes=`classes`)
// with torch.manual_seed(`seed`), made by python3-torch on first use (then reused
// within this process): `scripted` with torch.jit.script, else torch.jit.trace on a
// 1 x 3 x 64 x 64 input.
std::string TorchScriptResnet18(bool scripted, int classes = 10, int seed = 7);

// The rows of a float32 or float16 .npy array (N x D), as floats, and its shape.
std::vector<float> ReadFeatureRows(const std::string& npy_path, uint64_t* rows, uint64_t* columns);

// Every regular file under `dir` except the `.imgpipe-extract` state folder (relative
// name -> contents), for byte comparisons of two output folders.
std::vector<std::pair<std::string, std::string>> OutputFiles(const std::string& dir);

}  // namespace imgpipe::extract
