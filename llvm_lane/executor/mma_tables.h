// Matrix-instruction register layouts read from the CSV tables in llvm_lane/mma_layouts/
// (AMD's Matrix Instruction Calculator output, and kemit's own tables for gfx950 / gfx1250 in
// the same format, sources in that folder's README).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "program.h"

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

// One matrix instruction's table as indices into its row-major matrices (A m x k, B k x n, C and D
// m x n), made once per kernel so that a run only gathers and scatters.
struct MatrixLayout {
  const MmaTable* table = nullptr;
  int rows[4] = {}, columns[4] = {};
  int per_lane[4] = {};                // vector elements of each operand per lane
  std::vector<uint32_t> index[4];      // element e of lane l: index[i][e * table->lanes + l]
  bool complete[4] = {};               // every element of the matrix is in some lane
};

// `table` laid over `mma`'s matrices; false with `error` when a lane's element count is not the
// operand's or a cell lies outside its matrix.
bool matrix_layout(const MmaTable& table, const MmaOp& mma, MatrixLayout& layout, std::string& error);

}  // namespace kemit::exec
