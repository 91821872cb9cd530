// The Loader's options as flags: each command adds the flags of the options declared
// for it (IMGPIPE_LOADER_OPTIONS' commands), named FlagName(name), with the declared doc,
// check and the field's value as default; docs/commands.md lists them.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <type_traits>

#include "loader/loader_options.h"

namespace imgpipe::cli {

// Adds the flag of the Loader option `spec` to `cmd`, bound to `field` (the option's
// field, or a field of the same meaning in a command's own options); `aliases`:
// more names (",--train-crop-size").
template <typename T>
CLI::Option* AddLoaderFlag(CLI::App* cmd, const loader::OptionSpec& spec, T& field, const std::string& aliases = "") {
  const std::string names = loader::FlagName(spec.name) + aliases;
  CLI::Option* flag;
  if constexpr (std::is_same_v<T, bool>) {
    flag = cmd->add_flag(names, field, spec.doc)->capture_default_str();
  } else {
    flag = cmd->add_option(names, field, spec.doc);
  }
  const loader::OptionCheck& c = spec.check;
  if constexpr (std::is_same_v<T, std::string>) {
    flag->capture_default_str();
    if (!c.choices.empty()) flag->check(CLI::IsMember(c.choices));
  } else if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
    flag->capture_default_str();
    if (c.min > -std::numeric_limits<double>::infinity()) flag->check(CLI::Range(c.min, c.max));
  }
  return flag;
}

// The same, by the option's name.
template <typename T>
CLI::Option* AddLoaderFlag(CLI::App* cmd, const std::string& name, T& field, const std::string& aliases = "") {
  return AddLoaderFlag(cmd, loader::FindOptionSpec(name), field, aliases);
}

// Adds the flag of every option declared for `command`, bound to `options`' fields;
// `aliases`: more names of an option's flag, by option. The data-source options
// (std::optional fields) are AddDataSourceOptions' (every command reading --data).
void AddLoaderFlags(CLI::App* cmd, loader::OptionCommands command, loader::LoaderOptions& options,
                    const std::map<std::string, std::string>& aliases = {});

}  // namespace imgpipe::cli
