// The executor's decoded form of one kernel: every instruction of the llvm::Function turned once
// into an Op with register-slot operands, so that the run loop touches no LLVM object.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace kemit::exec {

// The 8-bit float format a processor reads an fp8 / bf8 matrix operand in (floats.h decode_fp8):
// gfx942 the FNUZ variants, gfx950 OCP's.
enum class Fp8 : uint8_t { None, E4M3Fnuz, E5M2Fnuz, E4M3Ocp, E5M2Ocp };

// How one element of a value is held in its 64-bit cell.
enum class Scalar : uint8_t { Int, Half, BFloat, Float, Double, Pointer };

struct ElementType {
  Scalar scalar = Scalar::Int;
  int bits = 32;          // storage width (ints: 1..64; floats: 16/32/64; pointers: 64 in a cell)
  int address_space = 0;  // pointers
};

// An operand: a register slot (per lane) or a constant (the same for every lane).
struct Ref {
  uint32_t index = 0;
  bool constant = false;
};

enum class Kind : uint8_t {
  Add, Sub, Mul, UDiv, SDiv, URem, SRem, Shl, LShr, AShr, And, Or, Xor,
  FAdd, FSub, FMul, FDiv, FNeg,
  ICmp, FCmp, Select,
  ZExt, SExt, Trunc, FPExt, FPTrunc, FPToSI, FPToUI, SIToFP, UIToFP, BitCast, AddrSpaceCast, Freeze,
  ExtractElement, InsertElement, ShuffleVector,
  GetElementPtr, Load, Store, AtomicAdd, Fence,
  Intrinsic,
  Branch, CondBranch, Return,
};

enum class Intrinsic : uint8_t {
  WorkitemId, WorkgroupId, DispatchPtr, Barrier, DsBpermute, UpdateDpp, ReadFirstLane,
  Fma, MaxNum, MinNum, Exp, Sqrt, Mfma, Wmma,
};

struct Op {
  Kind kind = Kind::Fence;
  Intrinsic intrinsic = Intrinsic::Fma;
  ElementType type;          // result element type (or stored/loaded element type)
  ElementType source;        // casts, compares: operand element type
  int width = 1;             // result elements (1 = scalar)
  int source_width = 1;      // operand elements (casts, bitcasts, extract, shuffle)
  uint32_t result = 0;       // slot
  std::vector<Ref> operands;
  int predicate = 0;         // icmp / fcmp (llvm::CmpInst::Predicate)
  bool nsw = false, nuw = false, exact = false, nneg = false, disjoint = false;
  bool workgroup_scope = false;  // atomicrmw: syncscope("workgroup") (else "agent")
  int64_t immediate = 0;     // workitem/group id dimension; load/store/atomicrmw alignment
  std::vector<int> mask;     // shufflevector mask (-1: poison)
  std::vector<int64_t> scales;  // getelementptr: bytes per index operand (operands[1..])
  int64_t offset = 0;           // getelementptr: constant byte offset
  int targets[2] = {-1, -1};    // branches: successor blocks
  int mma = -1;                 // index into Program::mma_ops
  std::string text;             // the instruction as printed, for error messages
};

// Incoming values of one block's phis along one edge.
struct PhiEdge {
  int from = -1;
  std::vector<std::pair<uint32_t, Ref>> copies;  // (phi slot, incoming value)
  std::vector<int> widths;
  // Some incoming value is another phi of this edge: the copies must read every value before
  // writing any (else each phi is written straight from its value).
  bool staged = false;
};

struct Block {
  std::string name;
  std::vector<Op> ops;           // non-phi instructions, terminator last
  std::vector<PhiEdge> phis;     // per predecessor
  int post_dominator = -1;       // immediate post-dominator (-1: the function's exit)
};

// A matrix instruction as the layout tables name it.
struct MmaOp {
  std::string table;             // e.g. "cdna3_v_mfma_f32_32x32x8_f16"
  int m = 0, n = 0, k = 0;
  Scalar operand = Scalar::Half;
  bool gfx1250_modifiers = false; // operands (neg_a, A, neg_b, B, c_mod, C, reuse_a, reuse_b)
  int widths[4] = {0, 0, 0, 0};   // vector elements of A, B, C, D per lane
  Fp8 fp8 = Fp8::None;            // A and B are 8-bit floats, 8 to each 64-bit operand element
  int int8_per_element = 0;       // A and B are 8-bit integers, this many to each element; C and D are i32
  bool sign_flags = false;        // operands (a_signed, A, b_signed, B, C, clamp): the integer WMMA
};

// The call operands that hold A, B and C: MFMA (A, B, C, cbsz, abid, blgp), gfx11/gfx12 WMMA
// (A, B, C), the integer WMMA (a_signed, A, b_signed, B, C, clamp), gfx1250's (neg_a, A, neg_b, B,
// c_mod, C, reuse_a, reuse_b).
struct MmaOperands {
  unsigned a, b, c;
};
inline MmaOperands mma_operands(const MmaOp& mma) {
  if (mma.gfx1250_modifiers) return {1, 3, 5};
  if (mma.sign_flags) return {1, 3, 4};
  return {0, 1, 2};
}

struct Param {
  std::string name;
  ElementType type;
  uint32_t slot = 0;
  bool readonly = false;  // the parameter's `readonly` promise: nothing stores through it
};

struct LdsGlobal {
  std::string name;
  uint64_t offset = 0, size = 0;
};

struct Program {
  std::string kernel;
  std::string arch;
  int wave_size = 64;
  std::vector<Param> params;
  std::vector<Block> blocks;
  std::vector<uint32_t> slot_offset;   // per slot: first cell (element e of lane l at offset + e*W + l)
  std::vector<int> slot_width;
  uint32_t cells_per_lane = 0;         // sum of widths
  std::vector<uint64_t> constants;     // constant pool (a constant Ref indexes here, elements in a row)
  // Each constant cell once per lane of a wave, cell c's lanes from c * wave_size: a constant
  // operand reads like a register (element e of lane l at e * wave_size + l), so lane loops step by one.
  std::vector<uint64_t> constant_lanes;
  std::vector<LdsGlobal> lds;
  uint64_t lds_bytes = 0;
  std::vector<MmaOp> mma_ops;
};

// The module's kernels (its defined amdgpu_kernel functions), in its order.
std::vector<std::string> kernel_names(const llvm::Module& module);

// Decodes one kernel ("" = the module's first); on failure returns false with `error` naming the
// instruction.
bool decode_kernel(llvm::Module& module, const std::string& kernel, Program& program, std::string& error);

// Bytes that name the program: two programs with the same fingerprint run alike on every launch
// (the instruction texts of error messages aside). fingerprint.cpp says what it covers.
std::string fingerprint(const Program& program);

// Pointer cells: the region (1-based) in the top 16 bits, the byte offset in the low 48.
constexpr int kRegionShift = 48;
constexpr uint64_t kOffsetMask = (uint64_t(1) << kRegionShift) - 1;
enum : uint64_t { kRegionNull = 0, kRegionLds = 1, kRegionDispatch = 2, kFirstBufferRegion = 3 };
inline uint64_t make_pointer(uint64_t region, uint64_t offset) {
  return (region << kRegionShift) | (offset & kOffsetMask);
}

// An LDS pointer names the array it was derived from (1 + its index in Program::lds, bits 32-47;
// 0: no array, an address cast from flat) and a signed 32-bit byte offset within it (bits 0-31).
// Address arithmetic moves the offset only, so an access past the end of one LDS array is out of
// bounds of that array, as in LLVM's memory model, even where the next array's bytes follow.
constexpr int kLdsArrayShift = 32;
constexpr uint64_t kLdsOffsetMask = 0xffffffffULL;
inline uint64_t make_lds_pointer(uint64_t array, int64_t offset) {
  return make_pointer(kRegionLds, (array << kLdsArrayShift) | (uint64_t(offset) & kLdsOffsetMask));
}
// `pointer` moved by `delta` bytes: within its region, and an LDS pointer within its array.
// Branch-free (a mask chosen by the region), so that an address loop over lanes vectorizes.
inline uint64_t advance_pointer(uint64_t pointer, int64_t delta) {
  const uint64_t moves = (pointer >> kRegionShift) == kRegionLds ? kLdsOffsetMask : kOffsetMask;
  return (pointer & ~moves) | ((pointer + uint64_t(delta)) & moves);
}

}  // namespace kemit::exec
