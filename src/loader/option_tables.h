// The docs' tables of the Loader's options, made from their declarations
// (IMGPIPE_LOADER_OPTIONS): docs/python.md and docs/commands.md show them between
// markers, and option_tables_test fails when a page differs from what these return.
#pragma once

#include <string>

namespace imgpipe::loader {

// The Markdown table of every option: keyword, type, default, values, flag and the
// commands taking it, what it does (docs/python.md, "loader-options").
std::string OptionsTable();

// The Markdown table of the options that are flags of train, bench or extract: flag,
// the commands, values, default, what it does (docs/commands.md, "loader-flags").
std::string OptionFlagsTable();

// `page` with the text between "<!-- BEGIN name -->\n" and "<!-- END name -->" replaced
// by `table`; throws Error when the page lacks the markers.
std::string WithGeneratedBlock(const std::string& page, const std::string& name, const std::string& table);

}  // namespace imgpipe::loader
