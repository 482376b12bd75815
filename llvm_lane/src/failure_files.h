// Writes each failing module to a folder and appends the command that shows the
// failure by hand, so that a red lane is one copy-paste away from a reproduction.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "kemit/lane/lane.h"

namespace kemit::lane {

void write_failure_files(const std::vector<LaneModule>& modules, const std::vector<driver::FlavorFacts>& flavors,
                         const std::string& folder, std::vector<LaneResult>& results);

}  // namespace kemit::lane
