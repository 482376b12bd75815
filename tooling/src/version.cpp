#include "kemit/tooling/version.h"

#include "kemit/tooling/version_data.h"

namespace kemit::tooling {

std::string version() { return KEMIT_VERSION; }
std::string git_describe() { return KEMIT_GIT_DESCRIBE; }
std::string version_line(const std::string& tool) { return tool + " " + version() + " (git " + git_describe() + ")"; }

}  // namespace kemit::tooling
