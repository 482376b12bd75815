// The flags every kemit tool spells the same way: --version and the location flags.
#pragma once
#include <string>

#include <CLI/CLI.hpp>

#include "kemit/tooling/locations.h"

namespace kemit::tooling {

// --version prints "<tool> <version> (git ...)" and exits 0 (CLI11 throws CLI::CallForVersion,
// a CLI::Success: catch CLI::Success where the tool catches CLI::CallForHelp).
void add_version_flag(CLI::App& app, const std::string& tool);

// --root, --build, --configs, with the rule of locations.h in their help texts.
void add_location_flags(CLI::App& app, LocationFlags& flags);

}  // namespace kemit::tooling
