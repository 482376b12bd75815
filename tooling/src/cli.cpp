#include "kemit/tooling/cli.h"

#include "kemit/tooling/version.h"

namespace kemit::tooling {

void add_version_flag(CLI::App& app, const std::string& tool) {
  app.set_version_flag("--version", version_line(tool), "print the version and exit");
}

void add_location_flags(CLI::App& app, LocationFlags& flags) {
  app.add_option("--root", flags.root,
                 "the source tree (py_engine/, parity/, golden/); default: the checkout at or above the current "
                 "folder, else the tree this tool was built from");
  app.add_option("--build", flags.build,
                 "the build folder (cpp_engine/kemit_emit, ...); default: the build holding this tool");
  app.add_option("--configs", flags.configs, "the config folder; default: <tree>/parity/configs");
}

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }
  return std::nullopt;
}

}  // namespace kemit::tooling
