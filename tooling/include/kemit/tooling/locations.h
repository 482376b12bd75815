// Where a kemit tool looks: the source tree, the build and the config folder. One rule for
// every tool (check_byte_identity, run_diff, check_llvm, check_numerics, golden), documented in
// docs/driver.md "Where it looks":
//   tree:    --root DIR; else the kemit checkout at or above the current directory (the first
//            folder up that holds py_engine/kemit/ and parity/configs/); else the tree this
//            tool was built from.
//   build:   --build DIR; else the build folder holding this executable (the first folder up
//            that holds CMakeCache.txt); else the build this tool was built in.
//   configs: --configs DIR; else <tree>/parity/configs.
// Every tool prints the result on its header line, and every command it suggests carries the
// flags that make another tool find the same places (suggested_flags).
#pragma once
#include <string>
#include <vector>

namespace kemit::tooling {

struct LocationFlags {  // as typed on the command line; "" = not given
  std::string root, build, configs;
};

struct Locations {
  std::string root, build, configs;  // absolute, normalised
  std::string root_origin;     // "--root", "cwd" (the checkout holding the cwd) or "built-in"
  std::string build_origin;    // "--build", "tool" (the build holding this tool) or "built-in"
  std::string configs_origin;  // "--configs" or "tree"
};

// Applies the rule. Throws std::invalid_argument (a usage error, exit 2) when a folder given by a
// flag does not exist, or when no tree can be found at all.
Locations locate(const LocationFlags& flags);
// The same rule from an explicit working directory and executable path (for tests).
Locations locate_from(const LocationFlags& flags, const std::string& cwd, const std::string& executable);

// The nearest folder at or above `start` holding a kemit checkout, or "".
std::string checkout_above(const std::string& start);

// "tree /w (cwd), build /w/build (tool), configs /w/parity/configs": the header line's tail.
std::string describe(const Locations& where);
// "<tool> <version> (git ...): tree ..., build ..., configs ...": a tool's first line.
std::string header_line(const std::string& tool, const Locations& where);

// The flags a suggested command needs so that it looks where this run looked: --root unless the
// tree came from the cwd (run from the same place, it finds it again), --build and --configs when
// they were given.
std::vector<std::string> suggested_flags(const Locations& where);

// `path` relative to `root` when it lies under it (commands print the same on every machine),
// else unchanged.
std::string relative_to(const std::string& path, const std::string& root);

// Words joined by spaces, each quoted for a POSIX shell when it needs it.
std::string shell_join(const std::vector<std::string>& words);

}  // namespace kemit::tooling
