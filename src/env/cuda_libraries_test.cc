#include "env/cuda_libraries.h"

#include <gtest/gtest.h>

#include "env/cuda_versions.h"
#include "env/env_test_util.h"

namespace imgpipe::env {
namespace {

TEST(CudaVersionsTest, DecodesEachLibrarysEncoding) {
  EXPECT_EQ(DecodeCudaVersion(12040).ToString(2), "12.4");
  EXPECT_EQ(DecodeCudaVersion(11080).ToString(2), "11.8");
  EXPECT_EQ(DecodeCudaVersion(13000).ToString(2), "13.0");
  EXPECT_EQ(DecodeCudnnVersion(90100).ToString(), "9.1.0");
  EXPECT_EQ(DecodeCudnnVersion(90501).ToString(), "9.5.1");
  EXPECT_EQ(DecodeCudnnVersion(8902).ToString(), "8.9.2");
  EXPECT_EQ(DecodeCudnnVersion(8700).ToString(), "8.7.0");
  EXPECT_EQ(DecodeNcclVersion(21803).ToString(), "2.18.3");
  EXPECT_EQ(DecodeNcclVersion(2708).ToString(), "2.7.8");
  EXPECT_LT(DecodeCudaVersion(12020), DecodeCudaVersion(12040));
  EXPECT_LT(DecodeCudnnVersion(8902), DecodeCudnnVersion(90000));
}

TEST(CudaVersionsTest, MinimumDriverPerCudaMajor) {
  EXPECT_EQ(MinimumDriverForCudaMajor(12), "525.60.13");
  EXPECT_EQ(MinimumDriverForCudaMajor(11), "450.80.02");
  EXPECT_EQ(MinimumDriverForCudaMajor(7), "");
}

TEST(CudaLibrariesTest, SonamesOfEachMajor) {
  EXPECT_EQ(SonameForMajor(CudaLibraryKind::kRuntime, 12), "libcudart.so.12");
  EXPECT_EQ(SonameForMajor(CudaLibraryKind::kRuntime, 11), "libcudart.so.11.0");
  EXPECT_EQ(SonameForMajor(CudaLibraryKind::kCudnn, 9), "libcudnn.so.9");
  EXPECT_EQ(SonameForMajor(CudaLibraryKind::kCublas, 12), "libcublas.so.12");
  std::vector<std::string> sonames =
      PreferSoname(DefaultSonames(CudaLibraryKind::kCudnn), "libcudnn.so.8");
  EXPECT_EQ(sonames, (std::vector<std::string>{"libcudnn.so.8", "libcudnn.so.9"}));
}

using CudaLibraryProbeTest = FakeNvidiaTest;

TEST_F(CudaLibraryProbeTest, TakesTheFirstSonameThatLoadsAndAsksItsVersion) {
  stack_.cudnn_version = 8902;
  AddFakeCudnn(loader_, "libcudnn.so.8");
  CudaLibrary cudnn =
      ProbeCudaLibrary(loader_, CudaLibraryKind::kCudnn, DefaultSonames(CudaLibraryKind::kCudnn));
  EXPECT_EQ(cudnn.tried, (std::vector<std::string>{"libcudnn.so.9", "libcudnn.so.8"}));
  EXPECT_EQ(cudnn.soname, "libcudnn.so.8");
  EXPECT_EQ(cudnn.path, "/usr/lib/x86_64-linux-gnu/libcudnn.so.8");
  ASSERT_TRUE(cudnn.version_known);
  EXPECT_EQ(cudnn.version.ToString(), "8.9.2");
}

TEST_F(CudaLibraryProbeTest, ReadsRuntimeCublasAndNcclVersions) {
  stack_.cudart_version = 11080;
  stack_.cublas_version[0] = 11;
  stack_.cublas_version[1] = 11;
  stack_.cublas_version[2] = 3;
  stack_.nccl_version = 21505;
  AddFakeCudart(loader_, "libcudart.so.11.0");
  AddFakeCublas(loader_, "libcublas.so.11");
  AddFakeNccl(loader_);
  CudaLibrary runtime = ProbeCudaLibrary(loader_, CudaLibraryKind::kRuntime,
                                         DefaultSonames(CudaLibraryKind::kRuntime));
  EXPECT_EQ(runtime.soname, "libcudart.so.11.0");
  EXPECT_EQ(runtime.version.ToString(2), "11.8");
  CudaLibrary cublas =
      ProbeCudaLibrary(loader_, CudaLibraryKind::kCublas, DefaultSonames(CudaLibraryKind::kCublas));
  EXPECT_EQ(cublas.version.ToString(), "11.11.3");
  CudaLibrary nccl =
      ProbeCudaLibrary(loader_, CudaLibraryKind::kNccl, DefaultSonames(CudaLibraryKind::kNccl));
  EXPECT_EQ(nccl.version.ToString(), "2.15.5");
}

TEST_F(CudaLibraryProbeTest, MissingLibraryAndMissingVersionFunction) {
  CudaLibrary none =
      ProbeCudaLibrary(loader_, CudaLibraryKind::kNccl, DefaultSonames(CudaLibraryKind::kNccl));
  EXPECT_FALSE(none.found());
  EXPECT_NE(none.error.find("libnccl.so.2"), std::string::npos);
  loader_.Add("libcudnn.so.9", {});
  CudaLibrary bare =
      ProbeCudaLibrary(loader_, CudaLibraryKind::kCudnn, DefaultSonames(CudaLibraryKind::kCudnn));
  EXPECT_TRUE(bare.found());
  EXPECT_FALSE(bare.version_known);
  EXPECT_NE(bare.error.find("no version function"), std::string::npos);
}

// A loader whose second library exists but fails to load (a missing dependency).
class BrokenSecondLoader : public LibraryLoader {
 public:
  std::unique_ptr<LoadedLibrary> Open(const std::string& soname, std::string* error) override {
    *error = soname == "b.so"
                 ? "b.so: undefined symbol: cudnnCreate"
                 : soname + ": cannot open shared object file: No such file or directory";
    return nullptr;
  }
};

TEST(LibraryLoaderTest, KeepsTheReasonOfALibraryThatExistsButFails) {
  BrokenSecondLoader loader;
  FirstLoadedLibrary result = OpenFirstLibrary(loader, {"a.so", "b.so", "c.so"});
  EXPECT_EQ(result.library, nullptr);
  EXPECT_EQ(result.tried.size(), 3u);
  EXPECT_EQ(result.error, "b.so: undefined symbol: cudnnCreate");
}

TEST(LibraryLoaderTest, DlopenLoadsARealLibraryAndItsSymbols) {
  DlopenLibraryLoader loader;
  std::string error;
  std::unique_ptr<LoadedLibrary> libm = loader.Open("libm.so.6", &error);
  ASSERT_NE(libm, nullptr) << error;
  auto cosine = libm->Function<double (*)(double)>("cos");
  ASSERT_NE(cosine, nullptr);
  EXPECT_DOUBLE_EQ(cosine(0.0), 1.0);
  EXPECT_EQ(libm->Symbol("no_such_symbol_in_libm"), nullptr);
  EXPECT_NE(libm->Path().find("libm"), std::string::npos) << libm->Path();
  EXPECT_EQ(loader.Open("libimgpipe_no_such_library.so.7", &error), nullptr);
  EXPECT_NE(error.find("libimgpipe_no_such_library.so.7"), std::string::npos) << error;
}

}  // namespace
}  // namespace imgpipe::env
