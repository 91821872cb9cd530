// The two binaries (model_commands.h): imgpipe runs every command that needs no model
// without mapping libtorch or OpenCV, hands the model commands to imgpipe-torch, and
// says what to do where there is none (a build without libtorch, or imgpipe copied
// alone). Runs in every build; IMGPIPE_TORCH_BUILT says whether this one has libtorch.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "cli/model_commands.h"

namespace imgpipe {
namespace {

namespace fs = std::filesystem;

const std::string kTorchBinary = (fs::path(kBinary).parent_path() / "imgpipe-torch").string();

// A class folder of `count` hymenoptera photos under `dir`/images, plus `extra` files.
std::string PhotoFolder(const std::string& dir, int count, const std::vector<std::string>& extra = {}) {
  const fs::path images = fs::path(dir) / "images";
  const fs::path ants = fs::path(kTestData) / "images/hymenoptera/train/ants";
  int made = 0;
  for (const auto& entry : fs::directory_iterator(ants)) {
    if (made == count) break;
    fs::create_directories(images / (made % 2 ? "b" : "a"));
    fs::copy_file(entry.path(), images / (made % 2 ? "b" : "a") / entry.path().filename());
    ++made;
  }
  for (const std::string& file : extra) {
    fs::copy_file(fs::path(kTestData) / file, images / "a" / fs::path(file).filename());
  }
  return images.string();
}

// The shared libraries and modules a run of `binary` with `args` loaded (LD_DEBUG=files:
// the dynamic loader's own account, dlopen included), one file name per line.
std::string LoadedLibraries(const std::string& binary, const std::vector<std::string>& args) {
  Result r = RunBinary(binary, args, false, {{"LD_DEBUG", "files"}});
  EXPECT_EQ(r.status, 0) << r.err;
  std::string loaded;
  size_t pos = 0;
  while ((pos = r.err.find("file=", pos)) != std::string::npos) {
    const size_t end = r.err.find_first_of(" \n", pos);
    loaded += r.err.substr(pos + 5, end - pos - 5) + "\n";
    pos = end;
  }
  EXPECT_FALSE(loaded.empty()) << "LD_DEBUG reported nothing: " << r.err.substr(0, 500);
  return loaded;
}

bool Mentions(const std::string& loaded, const std::string& name) {
  return loaded.find(name) != std::string::npos;
}

TEST(ModelCommands, ChosenByTheFirstWordThatIsNotAnOption) {
  std::vector<std::string> words = {"imgpipe", "--version", "train", "--data", "x"};
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  ASSERT_NE(cli::ChosenModelCommand(static_cast<int>(argv.size()), argv.data()), nullptr);
  EXPECT_STREQ(cli::ChosenModelCommand(static_cast<int>(argv.size()), argv.data())->name, "train");
  words = {"imgpipe", "inspect", "train"};  // a file named train
  argv.clear();
  for (std::string& w : words) argv.push_back(w.data());
  EXPECT_EQ(cli::ChosenModelCommand(static_cast<int>(argv.size()), argv.data()), nullptr);
}

TEST(ModelCommands, HelpListsThemWithTheirDescriptions) {
  Result r = RunImgpipe({"--help"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const cli::ModelCommand& c : cli::ModelCommands()) {
    EXPECT_NE(r.out.find(c.name), std::string::npos) << c.name;
    EXPECT_NE(r.out.find(std::string(c.description).substr(0, 40)), std::string::npos) << c.name;
  }
  for (const char* command : {"convert", "inspect", "bench", "doctor", "synth"}) {
    EXPECT_NE(r.out.find(command), std::string::npos) << command;
  }
}

TEST(ModelCommands, CommandsWithoutAModelLoadNeitherLibtorchNorOpenCv) {
  const std::string dir = FreshDir("no_torch_maps");
  const std::string images = PhotoFolder(dir, 10);
  const std::string shards = dir + "/shards";
  const std::string loaded_convert = LoadedLibraries(kBinary, {"convert", "--input", images, "--output", shards});
  const std::string shard = shards + "/train-00000-of-00001.tfrecord";
  ASSERT_TRUE(fs::exists(shard));
  const std::string loaded_inspect = LoadedLibraries(kBinary, {"inspect", shard});
  for (const std::string* loaded : {&loaded_convert, &loaded_inspect}) {
    for (const char* library :
         {"libtorch", "libc10", "libopencv", "libgdal", "imgpipe_opencv", "libcurl", "libheif",
          "libtiff", "libwebpdemux"}) {
      EXPECT_FALSE(Mentions(*loaded, library)) << library << " in:\n" << *loaded;
    }
  }
  // A PNG among the photos: OpenCV's codecs are loaded then, and decode it.
  const std::string dir2 = FreshDir("no_torch_maps_png");
  const std::string mixed = PhotoFolder(dir2, 4, {"images/mixed-formats/1/auto-union-3579207_640.png"});
  const std::string loaded_png =
      LoadedLibraries(kBinary, {"convert", "--input", mixed, "--output", dir2 + "/shards", "--json"});
  EXPECT_TRUE(Mentions(loaded_png, "libimgpipe_opencv.so")) << loaded_png;
  EXPECT_TRUE(Mentions(loaded_png, "libopencv_imgcodecs")) << loaded_png;
  EXPECT_FALSE(Mentions(loaded_png, "libtorch")) << loaded_png;
  Result inspect = RunImgpipe({"inspect", dir2 + "/shards/train-00000-of-00001.tfrecord", "--json"});
  ASSERT_EQ(inspect.status, 0) << inspect.err;
  EXPECT_EQ(nlohmann::json::parse(inspect.out)["records"], 5) << inspect.out;
}

// imgpipe alone (a build without libtorch has no imgpipe-torch; here imgpipe is copied
// into a folder without it when this build has one): the model commands say why they
// cannot run and how to get them, the others work.
TEST(ModelCommands, WithoutImgpipeTorchTheyExplainAndTheRestWork) {
  const std::string dir = FreshDir("alone");
  std::string binary = kBinary;
  if (fs::exists(kTorchBinary)) {
    binary = dir + "/imgpipe";
    fs::copy_file(kBinary, binary);
  }
  for (const char* command : {"train", "extract", "classify"}) {
    Result r = RunBinary(binary, {command, "--help"});
    EXPECT_EQ(r.status, 1) << command;
    EXPECT_NE(r.err.find(std::string("imgpipe ") + command + " runs a model with libtorch"),
              std::string::npos) << r.err;
    EXPECT_NE(r.err.find("apt-get install libtorch-dev"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("-DIMGPIPE_TORCH=ON"), std::string::npos) << r.err;
  }
  const std::string images = PhotoFolder(dir, 10);
  Result convert = RunBinary(binary, {"convert", "--input", images, "--output", dir + "/shards"});
  ASSERT_EQ(convert.status, 0) << convert.err;
  Result inspect = RunBinary(binary, {"inspect", dir + "/shards/train-00000-of-00001.tfrecord", "--json"});
  ASSERT_EQ(inspect.status, 0) << inspect.err;
  EXPECT_EQ(nlohmann::json::parse(inspect.out)["records"], 10) << inspect.out;
  Result doctor = RunBinary(binary, {"doctor", "--json"});
  ASSERT_TRUE(doctor.status == 0 || doctor.status == 2) << doctor.err;
  const nlohmann::json torch = nlohmann::json::parse(doctor.out)["torch"];
  EXPECT_EQ(torch["linked"], false);
  EXPECT_EQ(torch["problem"], "");
}

#if IMGPIPE_TORCH_BUILT
TEST(ModelCommands, ModelCommandsRunInImgpipeTorchWithTheSameHelp) {
  for (const char* command : {"train", "extract", "classify"}) {
    Result front = RunImgpipe({command, "--help"});
    Result direct = RunBinary(kTorchBinary, {command, "--help"});
    ASSERT_EQ(front.status, 0) << front.err;
    ASSERT_EQ(direct.status, 0) << direct.err;
    // The same flags; only the program name in "Usage:" differs.
    auto flags = [](const std::string& help) { return help.substr(help.find("Options:")); };
    EXPECT_EQ(flags(front.out), flags(direct.out)) << command;
    EXPECT_NE(front.out.find("--data"), std::string::npos);
  }
  // libtorch is mapped by the model commands only.
  EXPECT_TRUE(Mentions(LoadedLibraries(kBinary, {"train", "--help"}), "libtorch"));
}

TEST(ModelCommands, DoctorReportsTheLibtorchOfImgpipeTorch) {
  Result doctor = RunImgpipe({"doctor", "--json"});
  ASSERT_TRUE(doctor.status == 0 || doctor.status == 2) << doctor.err;
  const nlohmann::json torch = nlohmann::json::parse(doctor.out)["torch"];
  EXPECT_EQ(torch["linked"], true) << torch;
  EXPECT_FALSE(torch["version"].get<std::string>().empty()) << torch;
  Result info = RunBinary(kTorchBinary, {"torch-info"});
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_EQ(nlohmann::json::parse(info.out)["version"], torch["version"]);
}

TEST(ModelCommands, DoctorSaysWhenImgpipeTorchCannotStart) {
  // An imgpipe-torch that fails as one whose libtorch is missing does (status 127).
  const std::string dir = FreshDir("broken_torch");
  fs::copy_file(kBinary, dir + "/imgpipe");
  WriteFileAtomic(dir + "/imgpipe-torch", "#!/bin/sh\necho 'libtorch_cpu.so: cannot open shared object file' >&2\nexit 127\n", false);
  fs::permissions(dir + "/imgpipe-torch", fs::perms::owner_all);
  Result doctor = RunBinary(dir + "/imgpipe", {"doctor", "--json"});
  ASSERT_EQ(doctor.status, 2) << doctor.err;
  const nlohmann::json report = nlohmann::json::parse(doctor.out);
  EXPECT_EQ(report["torch"]["linked"], false);
  EXPECT_NE(report["torch"]["problem"].get<std::string>().find("exited with status 127"),
            std::string::npos) << report["torch"];
  bool error_check = false;
  for (const auto& check : report["checks"]) {
    if (check["layer"] == "libtorch" && check["status"] == "error") error_check = true;
  }
  EXPECT_TRUE(error_check) << report["checks"];
}
#endif

}  // namespace
}  // namespace imgpipe
