// Matrix-instruction register layouts read from the CSV tables in llvm_lane/mma_layouts/
// (AMD's Matrix Instruction Calculator output, and kemit's own tables for gfx950 / gfx1250 in
// the same format, sources in that folder's README).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kemit::exec {

struct MmaTable {
  std::string name;
  int lanes = 0;
  // per matrix (A, B, C, D), per lane, per vector element: (row, column) of the matrix element
  std::vector<std::vector<std::pair<int, int>>> cells[4];
  bool replicated[4] = {};  // some element of the matrix is held by more than one lane
};

// Loads (once per process) the four CSVs `<dir>/<name>_{A,B,C,D}.csv`; nullptr with `error` set
// when a file is missing or malformed.
const MmaTable* load_mma_table(const std::string& dir, const std::string& name, std::string& error);

}  // namespace kemit::exec
