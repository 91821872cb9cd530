// Subcommands of the imgpipe binary. Each Add*Command declares its options once (name,
// doc string, default, validation) on a CLI11 sub-app and runs when it is chosen.
#pragma once

#include <CLI/CLI.hpp>
#include <exception>
#include <string>
#include <vector>

namespace imgpipe::cli {

// The process's command line as main received it (imgpipe hands it on to imgpipe-torch;
// workers started of this binary take util's OwnCommandLine()).
std::vector<std::string>& CommandLine();

// What both binaries' main does once `app` holds their commands: tunes malloc, keeps
// argv in CommandLine(), parses and runs the chosen command. Returns the exit status:
// CLI11's for usage errors and --help, 1 after printing "imgpipe: error: ..." for any
// other exception, a command's CLI::RuntimeError code, else 0.
int RunCommandLine(CLI::App& app, int argc, char** argv);

// Prints "imgpipe: error: <what>" to standard error and returns exit status 1.
int ReportError(const std::exception& e);

// Gives `app` what both binaries share: the description, --version, one command required.
void DescribeProgram(CLI::App& app);

void AddSynthCommand(CLI::App& app);
void AddConvertCommand(CLI::App& app);
void AddInspectCommand(CLI::App& app);
void AddBenchCommand(CLI::App& app);
void AddDoctorCommand(CLI::App& app);
// The model commands (model_commands.h), in imgpipe-torch only.
void AddTrainCommand(CLI::App& app);
void AddExtractCommand(CLI::App& app);
void AddClassifyCommand(CLI::App& app);
void AddTorchInfoCommand(CLI::App& app);

}  // namespace imgpipe::cli
