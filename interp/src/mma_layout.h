// The matrix-core instructions' fragment layouts (docs/ir.md, "Matrix ops"), as the gemm_mma
// family's authors laid them out (tables/mma_layouts.json, which gemm_core reads as FRAGMENTS,
// ROW_FACTORS and static_row): which element of A, B and C each lane's vector element holds.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "numeric.h"

namespace kemit::interp {

// Where a matrix op finds each element of one operand (A m x k or B k x n, by rows): the register
// cell from the operand's first slot (slot offset * wave size + lane) and the bit shift of its byte
// in the cell (8-bit operands).
struct MmaGather {
  std::vector<uint32_t> cell;
  std::vector<uint8_t> shift;
  // Layouts that give an element to several lanes: every later holder (element, cell, shift), lane
  // by lane, which must hold the first holder's value.
  struct Replica {
    uint32_t element, cell;
    uint8_t shift;
  };
  std::vector<Replica> replicas;
};

struct MmaLayout {
  std::string instr;  // canonical name (ir/builder MMA_INSTRUCTIONS)
  int m = 0, n = 0, k = 0, wave = 0;
  int operand_width = 0, accumulator_width = 0;
  Scalar operand_kind = Scalar::f16;
  Fp8 fp8 = Fp8::none;  // not none: A and B are 8-bit floats, 8 to each i64 operand element
  // Not 0: A and B are signed 8-bit integers, this many to each i32 / i64 operand element (byte j
  // of element s holding fragment element s * bytes + j), and C and D are i32 (sums wrap).
  int int8_per_element = 0;
  // Indexed [lane * width + element]: (row, k) of A, (k, column) of B, (row, column) of C and D.
  std::vector<std::pair<int, int>> a, b, c;
  // The same places flattened, as the matrix op indexes its row-major A (m x k), B (k x n) and D
  // (m x n): row * k + col, row * n + col, row * n + col.
  std::vector<int> a_at, b_at, c_at;
  bool c_replicated = false;  // some element of C and D is held by more than one lane
  // The same again as a matrix op reads them, so that it gathers without a lookup per lane: A and
  // B by element, and the D element (row * n + col) of each accumulator cell, [element][lane].
  MmaGather a_gather, b_gather;
  std::vector<uint16_t> d_of_cell;
};

// The largest A or B (elements) and D of any layout: a matrix op keeps them on the stack.
constexpr size_t MMA_MAX_OPERAND = 512, MMA_MAX_D = 1024;

const std::vector<MmaLayout>& mma_layouts();
int find_mma_layout(const std::string& instr);  // -1 when unknown

}  // namespace kemit::interp
