// Subcommands of the imgpipe binary. Each Add*Command declares its options once (name,
// doc string, default, validation) on a CLI11 sub-app and runs when it is chosen.
#pragma once

#include <CLI/CLI.hpp>

namespace imgpipe::cli {

void AddSynthCommand(CLI::App& app);
void AddConvertCommand(CLI::App& app);
void AddInspectCommand(CLI::App& app);
void AddBenchCommand(CLI::App& app);

}  // namespace imgpipe::cli
