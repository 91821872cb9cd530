#include "extract/extract_test_util.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>

#include "convert/converter.h"
#include "convert/synth_dataset.h"
#include "extract/npy_file.h"
#include "record/example.h"
#include "record/image_feature_keys.h"
#include "record/tfrecord_writer.h"
#include "util/file.h"

namespace imgpipe::extract {
namespace {

// A path under the test temp dir unique to this process and `name`.
std::string TempPath(const std::string& name) {
  return JoinPath(::testing::TempDir(), "extract_test_" + std::to_string(::getpid()) + "_" + name);
}

// IEEE half -> float (for reading '<f2' arrays back).
float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    exponent = 113;
    while ((mantissa & 0x400) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace

std::string FreshTestDir(const std::string& name) {
  std::string dir = TempPath(name);
  EXPECT_EQ(std::system(("rm -rf '" + dir + "'").c_str()), 0);
  MakeDirectories(dir);
  return dir;
}

void MakeSynthImages(const std::string& dir, int classes, int per_class, int width, int height) {
  SynthOptions options;
  options.out_dir = dir;
  options.classes = classes;
  options.per_class = per_class;
  options.width = width;
  options.height = height;
  WriteSynthDataset(options);
}

void ConvertToShards(const std::string& images, const std::string& out, int min_shards) {
  ConvertOptions options;
  options.input = images;
  options.output = out;
  options.plan.min_shards = min_shards;
  RunConvert(options);
}

void AppendUndecodableRecord(const std::string& path, const std::string& filename, int64_t label) {
  std::string bytes = PathExists(path) ? ReadFile(path) : "";
  Example example;
  // A JPEG start-of-image marker followed by garbage: detected as JPEG, fails to decode.
  AddBytesFeature(example.mutable_features(), image_keys::kEncoded,
                  std::string("\xff\xd8\xff\xe0garbage, not a JPEG stream", 31));
  AddBytesFeature(example.mutable_features(), image_keys::kFilename, filename);
  AddInt64Feature(example.mutable_features(), image_keys::kLabel, label);
  std::unique_ptr<WritableFile> file = OpenWritableFile(path);
  file->Append(bytes);
  TfRecordWriter writer(*file);
  writer.Write(SerializeExample(example));
  writer.Close();
  file->Close();
  RemoveFile(path + ".idx");  // now stale
}

bool PythonHas(const std::string& module) {
  static std::map<std::string, bool> known;
  auto it = known.find(module);
  if (it != known.end()) return it->second;
  std::string command = "/usr/bin/python3 -c 'import " + module + "' >/dev/null 2>&1";
  return known[module] = std::system(command.c_str()) == 0;
}

std::string RunPython(const std::string& script, const std::vector<std::string>& args) {
  static int calls = 0;
  std::string base = TempPath("python_" + std::to_string(calls++));
  WriteFileAtomic(base + ".py", script, false);
  std::string command = "/usr/bin/python3 '" + base + ".py'";
  for (const std::string& a : args) command += " '" + a + "'";
  command += " >'" + base + ".out' 2>'" + base + ".err'";
  int status = std::system(command.c_str());
  std::string out = PathExists(base + ".out") ? ReadFile(base + ".out") : "";
  if (status != 0) {
    ADD_FAILURE() << "python3 failed (status " << status << "):\n"
                  << (PathExists(base + ".err") ? ReadFile(base + ".err") : "") << "\nstdout:\n" << out;
  }
  return out;
}

std::string TorchScriptResnet18(bool scripted, int classes, int seed) {
  static std::map<std::string, std::string> made;
  std::string key = std::string(scripted ? "script" : "trace") + "_" + std::to_string(classes) +
                    "_" + std::to_string(seed);
  if (auto it = made.find(key); it != made.end()) return it->second;
  std::string path = TempPath("resnet18_" + key + ".pt");
  RunPython(
      "import sys, torch, torchvision\n"
      "path, mode, classes, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])\n"
      "torch.manual_seed(seed)\n"
      "m = torchvision.models.resnet18(weights=None, num_classes=classes).eval()\n"
      "s = torch.jit.script(m) if mode == 'script' else torch.jit.trace(m, torch.zeros(1, 3, 64, 64))\n"
      "s.save(path)\n",
      {path, scripted ? "script" : "trace", std::to_string(classes), std::to_string(seed)});
  return made[key] = path;
}

std::vector<float> ReadFeatureRows(const std::string& npy_path, uint64_t* rows, uint64_t* columns) {
  npy::ArrayInfo info = npy::ReadHeader(npy_path);
  EXPECT_EQ(info.shape.size(), 2u);
  *rows = info.shape.at(0);
  *columns = info.shape.at(1);
  std::string data = ReadFile(npy_path).substr(info.data_offset);
  std::vector<float> out(*rows * *columns);
  if (info.descr == "<f4") {
    std::memcpy(out.data(), data.data(), out.size() * 4);
  } else {
    EXPECT_EQ(info.descr, "<f2");
    for (size_t i = 0; i < out.size(); ++i) {
      uint16_t h;
      std::memcpy(&h, data.data() + 2 * i, 2);
      out[i] = HalfToFloat(h);
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> OutputFiles(const std::string& dir) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const std::string& name : ListDirectory(dir)) {
    if (name == ".imgpipe-extract" || IsDirectory(JoinPath(dir, name))) continue;
    files.emplace_back(name, ReadFile(JoinPath(dir, name)));
  }
  return files;
}

}  // namespace imgpipe::extract
