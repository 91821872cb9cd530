// The imgpipe binary: parses the command line and runs one subcommand. The model
// commands (train, extract, classify) run in imgpipe-torch (model_commands.h), so this
// binary never loads libtorch.
#include <exception>

#include "cli/commands.h"
#include "cli/model_commands.h"

int main(int argc, char** argv) {
  using namespace imgpipe::cli;
  // 1. A model command: imgpipe-torch takes over this process with the same arguments.
  if (const ModelCommand* command = ChosenModelCommand(argc, argv)) {
    try {
      ExecTorchBinary(*command, argv);
    } catch (const std::exception& e) {
      return ReportError(e);
    }
  }
  // 2. Every other command runs here.
  CLI::App app;
  DescribeProgram(app);
  AddSynthCommand(app);
  AddConvertCommand(app);
  AddInspectCommand(app);
  AddBenchCommand(app);
  AddDoctorCommand(app);
  ListModelCommands(app);
  return RunCommandLine(app, argc, argv);
}
