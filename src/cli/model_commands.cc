#include "cli/model_commands.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "cli/commands.h"
#include "util/error.h"
#include "util/subprocess.h"

namespace imgpipe::cli {
namespace {

constexpr char kTorchBinaryName[] = "imgpipe-torch";

}  // namespace

const std::vector<ModelCommand>& ModelCommands() {
  static const std::vector<ModelCommand> commands = {
      {"train",
       "Train an image classifier on convert's TFRecord shards (train-*, validation-*), with "
       "mixed precision and data parallelism over processes (Gloo on CPUs, NCCL on GPUs; "
       "torchrun/Slurm variables are read, or --nproc starts local workers)."},
      {"extract",
       "Run a model over every image of a TFRecord or image folder and write one row of "
       "features per image into .npy shards"},
      {"classify",
       "Print the top-k classes of images with their probabilities (softmax of the model's "
       "logits, eval preprocessing)"},
  };
  return commands;
}

const char* ModelCommandDescription(const std::string& name) {
  for (const ModelCommand& c : ModelCommands()) {
    if (name == c.name) return c.description;
  }
  throw Error("'" + name + "' is not a model command");
}

const ModelCommand* ChosenModelCommand(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    for (const ModelCommand& c : ModelCommands()) {
      if (std::strcmp(argv[i], c.name) == 0) return &c;
    }
    return nullptr;
  }
  return nullptr;
}

std::string TorchBinaryPath() {
  return (std::filesystem::path(CurrentExecutable()).parent_path() / kTorchBinaryName).string();
}

void ExecTorchBinary(const ModelCommand& command, char** argv) {
  const std::string path = TorchBinaryPath();
  ::execv(path.c_str(), argv);
  const int error = errno;
  if (error == ENOENT) {
    throw Error(std::string("imgpipe ") + command.name + " runs a model with libtorch, and this imgpipe was built "
                "without it (no " + path + "). Install libtorch (Debian 12: apt-get install "
                "libtorch-dev) and rebuild with -DIMGPIPE_TORCH=ON (the default; make build does "
                "it). convert, inspect, bench, doctor and synth work without it.");
  }
  throw Error("cannot run " + path + ": " + std::strerror(error));
}

void ListModelCommands(CLI::App& app) {
  for (const ModelCommand& c : ModelCommands()) {
    CLI::App* cmd = app.add_subcommand(c.name, c.description);
    cmd->allow_extras();
    cmd->callback([&c] {
      std::vector<char*> argv;
      for (std::string& arg : CommandLine()) argv.push_back(arg.data());
      argv.push_back(nullptr);
      ExecTorchBinary(c, argv.data());
    });
  }
}

nlohmann::json TorchBuildInfoJson(const env::TorchBuildInfo& info) {
  return {{"linked", info.linked},
          {"version", info.version},
          {"cuda_build", info.cuda_build},
          {"cuda_version", info.cuda_version},
          {"cudnn_version", info.cudnn_version},
          {"cuda_available", info.cuda_available},
          {"cuda_device_count", info.cuda_device_count}};
}

env::TorchBuildInfo TorchBuildInfoFromJson(const nlohmann::json& json) {
  env::TorchBuildInfo info;
  info.linked = json.value("linked", info.linked);
  info.version = json.value("version", info.version);
  info.cuda_build = json.value("cuda_build", info.cuda_build);
  info.cuda_version = json.value("cuda_version", info.cuda_version);
  info.cudnn_version = json.value("cudnn_version", info.cudnn_version);
  info.cuda_available = json.value("cuda_available", info.cuda_available);
  info.cuda_device_count = json.value("cuda_device_count", info.cuda_device_count);
  return info;
}

env::TorchBuildInfo AskTorchBuildInfo() {
  env::TorchBuildInfo info;
  try {
    const std::string path = TorchBinaryPath();
    if (!std::filesystem::exists(path)) return info;
    const ProgramOutput out = RunForOutput({path, "torch-info"});
    if (out.status != 0) {
      info.problem = path + " exited with status " + std::to_string(out.status) +
                     " (its error is printed above)";
      return info;
    }
    return TorchBuildInfoFromJson(nlohmann::json::parse(out.output));
  } catch (const std::exception& e) {
    info.problem = e.what();
    return info;
  }
}

}  // namespace imgpipe::cli
