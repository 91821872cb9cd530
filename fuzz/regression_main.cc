// main() for a fuzz target built without libFuzzer (the ordinary build): calls
// LLVMFuzzerTestOneInput on each argument in order, in one process, so that an input
// whose outcome depends on the one before it reproduces; a folder argument stands for
// its files, sorted by name. `make test` runs every target this way over
// fuzz/regressions/<target>/ and fuzz/corpus/<target>/ (fuzz/CMakeLists.txt). A failed
// check aborts, as under libFuzzer.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "util/file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string path = argv[i];
    if (!imgpipe::IsDirectory(path)) {
      inputs.push_back(path);
      continue;
    }
    std::vector<std::string> names = imgpipe::ListDirectory(path);
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) inputs.push_back(imgpipe::JoinPath(path, name));
  }
  for (const std::string& input : inputs) {
    const std::string bytes = imgpipe::ReadFile(input);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("%zu inputs ran without a failed check\n", inputs.size());
  return 0;
}
