// The version every kemit tool prints for `--version`: the CMake project VERSION (the one
// place it is set) and `git describe` of the tree at build time.
#pragma once
#include <string>

namespace kemit::tooling {

std::string version();       // "0.5.0"
std::string git_describe();  // "6eb69dc-dirty", or "no git"
// "<tool> 0.5.0 (git 6eb69dc)": what `<tool> --version` prints.
std::string version_line(const std::string& tool);

}  // namespace kemit::tooling
