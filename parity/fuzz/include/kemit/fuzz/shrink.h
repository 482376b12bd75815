// Shrinking a failing spec: greedy passes that drop fields (back to their defaults), move values
// toward the default or the smallest valid value, and move to an earlier processor; a candidate
// is kept only when it is smaller and still fails the same way (same lane and verdict). Each
// pass's candidates go through the lanes as one batch.
#pragma once
#include <string>

#include "kemit/fuzz/domain.h"
#include "kemit/fuzz/lanes.h"

namespace kemit::fuzz {

struct Shrunk {
  DrawnSpec spec;       // the smallest spec found that fails the same way
  SpecResult result;    // its results
  Failure failure;      // its failure of the same signature
  int passes = 0;       // accepted shrinking steps
  int evaluations = 0;  // candidate specs run
};

// A measure of a spec's size: fields present, distance of each value from the default, the
// processor's position in the table. Shrinking only ever lowers it.
double spec_size(const Domain& domain, const std::string& arch, const nlohmann::json& spec);

Shrunk shrink(FuzzLanes& lanes, const Domain& domain, const DrawnSpec& failing, const Failure& failure);

}  // namespace kemit::fuzz
