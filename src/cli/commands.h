// Subcommands of the imgpipe binary. Each Add*Command declares its options once (name,
// doc string, default, validation) on a CLI11 sub-app and runs when it is chosen.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace imgpipe::cli {

// The process's command line as main received it (for commands that start workers
// of themselves).
std::vector<std::string>& CommandLine();

void AddSynthCommand(CLI::App& app);
void AddConvertCommand(CLI::App& app);
void AddInspectCommand(CLI::App& app);
void AddBenchCommand(CLI::App& app);
void AddDoctorCommand(CLI::App& app);
#ifdef IMGPIPE_HAVE_TORCH
void AddTrainCommand(CLI::App& app);
void AddExtractCommand(CLI::App& app);
void AddClassifyCommand(CLI::App& app);
#endif

}  // namespace imgpipe::cli
