#include "cli/loader_flags.h"

namespace imgpipe::cli {

void AddLoaderFlags(CLI::App* cmd, loader::OptionCommands command, loader::LoaderOptions& options,
                    const std::map<std::string, std::string>& aliases) {
  loader::ForEachOption(options, [&](const loader::OptionSpec& spec, auto& field) {
    using T = std::decay_t<decltype(field)>;
    if constexpr (!std::is_arithmetic_v<T> && !std::is_same_v<T, std::string>) {
      return;  // std::optional: AddDataSourceOptions'
    } else {
      if (!(spec.commands & command)) return;
      const auto alias = aliases.find(spec.name);
      AddLoaderFlag(cmd, spec, field, alias == aliases.end() ? "" : alias->second);
    }
  });
}

}  // namespace imgpipe::cli
