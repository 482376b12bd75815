// Reading the layout CSVs (mma_tables.h).
#include "mma_tables.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

namespace kemit::exec {
namespace {

// "A[3][12]" -> (3, 12)
bool parse_cell(const std::string& cell, char matrix, std::pair<int, int>& at) {
  if (cell.size() < 7 || cell[0] != matrix || cell[1] != '[') return false;
  size_t close = cell.find(']');
  if (close == std::string::npos || close + 1 >= cell.size() || cell[close + 1] != '[') return false;
  at.first = std::atoi(cell.c_str() + 2);
  at.second = std::atoi(cell.c_str() + close + 2);
  return cell.back() == ']';
}

bool read_matrix(const std::string& path, char matrix, std::vector<std::vector<std::pair<int, int>>>& rows,
                 std::string& error) {
  std::ifstream in(path);
  if (!in) return error = "cannot read MMA layout table " + path, false;
  std::string line;
  int header_lines = 0;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (header_lines < 3) {  // Architecture:, Instruction:, the column header
      ++header_lines;
      continue;
    }
    std::stringstream fields(line);
    std::string field;
    std::getline(fields, field, ',');
    if (std::atoi(field.c_str()) != static_cast<int>(rows.size()))
      return error = path + ": lane " + field + " out of order", false;
    std::vector<std::pair<int, int>> lane;
    while (std::getline(fields, field, ',')) {
      std::pair<int, int> at;
      if (!parse_cell(field, matrix, at)) return error = path + ": cannot read cell '" + field + "'", false;
      lane.push_back(at);
    }
    rows.push_back(std::move(lane));
  }
  if (rows.empty()) return error = path + ": no lanes", false;
  return true;
}

}  // namespace

const MmaTable* load_mma_table(const std::string& dir, const std::string& name, std::string& error) {
  static std::map<std::string, std::unique_ptr<MmaTable>> loaded;
  auto found = loaded.find(name);
  if (found != loaded.end()) return found->second.get();
  auto table = std::make_unique<MmaTable>();
  table->name = name;
  const char matrices[4] = {'A', 'B', 'C', 'D'};
  for (int i = 0; i < 4; ++i)
    if (!read_matrix(dir + "/" + name + "_" + matrices[i] + ".csv", matrices[i], table->cells[i], error)) return nullptr;
  table->lanes = static_cast<int>(table->cells[0].size());
  for (int i = 0; i < 4; ++i) {
    std::set<std::pair<int, int>> places;
    size_t count = 0;
    for (const auto& lane : table->cells[i]) places.insert(lane.begin(), lane.end()), count += lane.size();
    table->replicated[i] = places.size() != count;
  }
  return (loaded[name] = std::move(table)).get();
}

bool matrix_layout(const MmaTable& table, const MmaOp& mma, MatrixLayout& layout, std::string& error) {
  const int dims[4][2] = {{mma.m, mma.k}, {mma.k, mma.n}, {mma.m, mma.n}, {mma.m, mma.n}};
  layout.table = &table;
  for (int i = 0; i < 4; ++i) {
    const char* matrix = "ABCD" + i;
    layout.rows[i] = dims[i][0], layout.columns[i] = dims[i][1], layout.per_lane[i] = mma.widths[i];
    if (int(table.cells[i].size()) != table.lanes)
      return error = "layout table " + mma.table + " gives " + matrix[0] + " for " + std::to_string(table.cells[i].size()) +
                     " lanes, A for " + std::to_string(table.lanes), false;
    std::vector<uint32_t>& index = layout.index[i];
    index.assign(size_t(mma.widths[i]) * size_t(table.lanes), 0);
    std::vector<char> covered(size_t(dims[i][0]) * size_t(dims[i][1]), 0);
    for (int l = 0; l < table.lanes; ++l) {
      const auto& cells = table.cells[i][size_t(l)];
      if (int(cells.size()) != mma.widths[i])
        return error = "layout table " + mma.table + " gives " + matrix[0] + " " + std::to_string(cells.size()) +
                       " elements per lane; the intrinsic's operand has " + std::to_string(mma.widths[i]), false;
      for (size_t e = 0; e < cells.size(); ++e) {
        auto [row, column] = cells[e];
        if (row < 0 || row >= dims[i][0] || column < 0 || column >= dims[i][1])
          return error = "layout table " + mma.table + " places " + matrix[0] + "[" + std::to_string(row) + "][" +
                         std::to_string(column) + "] outside the " + std::to_string(dims[i][0]) + " x " +
                         std::to_string(dims[i][1]) + " matrix", false;
        uint32_t at = uint32_t(row * dims[i][1] + column);
        index[e * size_t(table.lanes) + size_t(l)] = at;
        covered[at] = 1;
      }
    }
    layout.complete[i] = std::find(covered.begin(), covered.end(), 0) == covered.end();
  }
  return true;
}

}  // namespace kemit::exec
