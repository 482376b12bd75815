// The flags every kemit tool spells the same way: --version and the location flags.
#pragma once
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "kemit/tooling/locations.h"

namespace kemit::tooling {

// --version prints "<tool> <version> (git ...)" and exits 0 (CLI11 throws CLI::CallForVersion,
// a CLI::Success: catch CLI::Success where the tool catches CLI::CallForHelp).
void add_version_flag(CLI::App& app, const std::string& tool);

// --root, --build, --configs, with the rule of locations.h in their help texts.
void add_location_flags(CLI::App& app, LocationFlags& flags);

// Parses the command line: std::nullopt to go on, else the exit code (0 after --help or
// --version, 2 for a usage error, as in every kemit tool) once CLI11 has printed its message.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv);

}  // namespace kemit::tooling
