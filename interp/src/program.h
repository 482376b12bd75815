// The kernel compiled for interpretation: every value gets a run of register slots (one per vector
// element), every op an Instr with its operands' slots and kinds resolved once, so the executor
// never looks at strings while it runs.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kemit/ir/builder.h"
#include "numeric.h"

namespace kemit::interp {

// The op kinds of tables/ops.json (the generated enum every engine layer uses).
using Code = tables::OpKind;

// In the order of the icmp then the fcmp predicates of tables/ops.json.

enum Pred : uint8_t { eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge, oeq, one, olt, ole, ogt, oge };

struct Instr;
using Block = std::vector<Instr>;

struct Operand {
  int slot = 0;   // first register slot
  int width = 1;  // vector elements (1 for a scalar)
  Scalar kind = Scalar::i32;
};

struct Instr {
  Code code = Code::constant;
  const ir::Op* op = nullptr;  // the source op: error texts print it
  Operand result;              // unused when the op has none
  std::vector<Operand> in;     // operands (a for: lo, hi, step, inits)
  bool nsw = false, nuw = false, flag = false;  // flag: disjoint (bit_or), nneg (zext), scope workgroup (atomic_add)
  int64_t imm = 0;  // align (load/store/atomic_add), index, ctrl, dim, predicate, element bytes (ptr_add)
  std::vector<uint64_t> data;  // const element bits; shuffle mask
  std::vector<Block> bodies;   // for: body; if: then [, else]
  std::vector<Operand> args;   // for: iv, iters
  std::vector<Operand> yields; // for: the body's yield operands
  std::vector<Operand> results;  // for: the loop results
  int mma = -1;                // index into the mma layout table
};

struct ParamInfo {
  std::string name;
  Operand value;
  bool pointer = false;
  bool readonly = false;  // the param's `readonly` promise: nothing stores through it
  int region = 0;  // pointer params: the memory region its buffer gets
};

struct LdsInfo {
  std::string name;
  Operand value;
  size_t bytes = 0;
  int region = 0;
};

struct Program {
  std::string kernel;
  int wave_size = 64;
  int slots = 0;  // register slots per lane
  std::vector<ParamInfo> params;
  std::vector<LdsInfo> lds;
  Block body;
};

// Throws InterpError naming the op for an op or type the interpreter cannot run.
Program compile(const ir::Kernel& kernel);
// The op as the canonical text shows it (first line of a for / if): error texts start with it.
std::string op_label(const ir::Op& op);

}  // namespace kemit::interp
