// The commands that run a model (train, extract, classify) live in a second binary,
// imgpipe-torch, installed beside imgpipe: the only program that links libtorch. The
// imgpipe front end lists them in its --help and hands them their command line unchanged
// (execv, the same process id), so the user sees one command with one set of flags,
// while every other command starts without loading libtorch (git runs git-* the same
// way). A build without libtorch has no imgpipe-torch: the model commands then say so
// and how to get it, and the rest work.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "env/torch_build_info.h"

namespace imgpipe::cli {

struct ModelCommand {
  const char* name;
  const char* description;  // what both binaries' --help say
};

// train, extract and classify.
const std::vector<ModelCommand>& ModelCommands();

// The description of model command `name`; throws Error for another name.
const char* ModelCommandDescription(const std::string& name);

// The model command that `argv` chooses (its first argument not starting with '-'), or
// nullptr when it chooses another command or none.
const ModelCommand* ChosenModelCommand(int argc, char** argv);

// imgpipe-torch's path: beside this process's executable.
std::string TorchBinaryPath();

// Replaces this process with imgpipe-torch running `argv` (which chooses `command`)
// unchanged. Returns only by throwing Error: imgpipe-torch is missing (the message says
// why and how to get it) or cannot be executed.
[[noreturn]] void ExecTorchBinary(const ModelCommand& command, char** argv);

// Adds the model commands to `app` for its --help; chosen, each runs ExecTorchBinary
// (main normally execs before parsing: see ChosenModelCommand).
void ListModelCommands(CLI::App& app);

// The libtorch imgpipe-torch links, asked by running `imgpipe-torch torch-info` (about a
// second: it loads libtorch). `linked` is false when there is no imgpipe-torch, with
// `problem` set when there is one that did not answer. Never throws.
env::TorchBuildInfo AskTorchBuildInfo();

// `info` as torch-info prints it, and back (missing keys keep their defaults).
nlohmann::json TorchBuildInfoJson(const env::TorchBuildInfo& info);
env::TorchBuildInfo TorchBuildInfoFromJson(const nlohmann::json& json);

}  // namespace imgpipe::cli
