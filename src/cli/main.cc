// The imgpipe binary: parses the command line and runs one subcommand.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "util/malloc_tuning.h"

std::vector<std::string>& imgpipe::cli::CommandLine() {
  static std::vector<std::string> command_line;
  return command_line;
}

int main(int argc, char** argv) {
  imgpipe::TuneMallocForLargeBuffers();
  imgpipe::cli::CommandLine().assign(argv, argv + argc);
  CLI::App app{"imgpipe: fast image input pipelines, TFRecord conversion and training"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "imgpipe 0.1");
  imgpipe::cli::AddSynthCommand(app);
  imgpipe::cli::AddConvertCommand(app);
  imgpipe::cli::AddInspectCommand(app);
  imgpipe::cli::AddBenchCommand(app);
  imgpipe::cli::AddDoctorCommand(app);
#ifdef IMGPIPE_HAVE_TORCH
  imgpipe::cli::AddTrainCommand(app);
  imgpipe::cli::AddExtractCommand(app);
  imgpipe::cli::AddClassifyCommand(app);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "imgpipe: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
