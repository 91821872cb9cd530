// imgpipe-torch: the model commands (train, extract, classify), the only program that
// links libtorch. `imgpipe train ...` execs it with its arguments unchanged
// (model_commands.h); run by hand it works the same.
#include <cstdio>

#include "cli/commands.h"
#include "cli/model_commands.h"
#include "train/torch_info.h"

namespace imgpipe::cli {

void AddTorchInfoCommand(CLI::App& app) {
  // Hidden (no group): for `imgpipe doctor`, which does not link libtorch.
  CLI::App* cmd = app.add_subcommand("torch-info", "Print the linked libtorch's build as JSON");
  cmd->group("");
  cmd->callback([] {
    std::printf("%s\n", TorchBuildInfoJson(train::CurrentTorchBuildInfo()).dump().c_str());
  });
}

}  // namespace imgpipe::cli

int main(int argc, char** argv) {
  using namespace imgpipe::cli;
  CLI::App app;
  DescribeProgram(app);
  AddTrainCommand(app);
  AddExtractCommand(app);
  AddClassifyCommand(app);
  AddTorchInfoCommand(app);
  return RunCommandLine(app, argc, argv);
}
