#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "util/malloc_tuning.h"

namespace imgpipe::cli {

std::vector<std::string>& CommandLine() {
  static std::vector<std::string> command_line;
  return command_line;
}

int ReportError(const std::exception& e) {
  std::fprintf(stderr, "imgpipe: error: %s\n", e.what());
  return 1;
}

void DescribeProgram(CLI::App& app) {
  app.description("imgpipe: fast image input pipelines, TFRecord conversion and training");
  app.require_subcommand(1);
  app.set_version_flag("--version", "imgpipe 0.1");
}

int RunCommandLine(CLI::App& app, int argc, char** argv) {
  TuneMallocForLargeBuffers();
  CommandLine().assign(argv, argv + argc);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    return ReportError(e);
  }
  return 0;
}

}  // namespace imgpipe::cli
