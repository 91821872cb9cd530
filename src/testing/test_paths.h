// Where the tests find their files and programs, read from the environment that CTest
// gives every test (imgpipe_add_test in CMakeLists.txt) instead of compiled in: a test's
// object file is then the same in every clone, and ccache reuses it across clones (CI's
// fresh clone on a machine that built the tree before, a worktree beside this one).
// CMake force-includes this header into every test binary. To run a test binary by
// hand, run it through `ctest -R NAME` or set the variables it names.
#pragma once

#include <cstdlib>
#include <string>

namespace imgpipe::test_paths {

// The value of environment variable `name`; unset, a path that names the variable, so
// that a test run outside CTest fails saying what it lacks.
inline std::string Get(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string("/unset-environment-variable/") + name;
}

}  // namespace imgpipe::test_paths

// ../shared/testdata: files made by other tools.
#define IMGPIPE_TESTDATA_DIR (::imgpipe::test_paths::Get("IMGPIPE_TESTDATA_DIR"))
// The repository's root.
#define IMGPIPE_SOURCE_DIR (::imgpipe::test_paths::Get("IMGPIPE_SOURCE_DIR"))
// The tf_datasets fixture's TF-slim and TFDS shards.
#define IMGPIPE_TF_DATASETS_DIR (::imgpipe::test_paths::Get("IMGPIPE_TF_DATASETS_DIR"))
// The imgpipe binary of this build.
#define IMGPIPE_BINARY (::imgpipe::test_paths::Get("IMGPIPE_BINARY"))
