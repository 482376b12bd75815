// Decoding one kernel of an llvm::Module into the executor's Program (program.h).
#include "program.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "llvm/Analysis/PostDominators.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GetElementPtrTypeIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/ModuleSlotTracker.h"
#include "llvm/IR/Operator.h"
#include "llvm/Support/raw_ostream.h"

#include "intrinsic_names.h"

namespace kemit::exec {
namespace {

std::string printed(const llvm::Value& value) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  value.print(stream);
  stream.flush();
  size_t start = text.find_first_not_of(' ');
  return start == std::string::npos ? text : text.substr(start);
}

// As printed(), numbering the values with one slot tracker for the whole decode: printing an
// instruction alone numbers its whole function again each time.
std::string printed(const llvm::Value& value, llvm::ModuleSlotTracker& slots) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  value.print(stream, slots);
  stream.flush();
  size_t start = text.find_first_not_of(' ');
  return start == std::string::npos ? text : text.substr(start);
}

int lanes_of(llvm::Type* type) {
  if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type)) return static_cast<int>(vector->getNumElements());
  return 1;
}

bool element_type_of(llvm::Type* type, ElementType& out) {
  if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type)) type = vector->getElementType();
  if (type->isIntegerTy() && type->getIntegerBitWidth() <= 64) out = {Scalar::Int, int(type->getIntegerBitWidth()), 0};
  else if (type->isHalfTy()) out = {Scalar::Half, 16, 0};
  else if (type->isBFloatTy()) out = {Scalar::BFloat, 16, 0};
  else if (type->isFloatTy()) out = {Scalar::Float, 32, 0};
  else if (type->isDoubleTy()) out = {Scalar::Double, 64, 0};
  else if (type->isPointerTy()) out = {Scalar::Pointer, 64, int(type->getPointerAddressSpace())};
  else return false;
  return true;
}

class Decoder {
 public:
  Decoder(llvm::Module& module, Program& program, std::string& error)
      : module_(module), layout_(module.getDataLayout()), program_(program), error_(error), slots_tracker_(&module) {}

  bool run(llvm::Function& function);

 private:
  bool fail(const std::string& why) {
    if (error_.empty()) error_ = why;
    return false;
  }
  uint32_t new_slot(int width);
  bool ref_of(llvm::Value* value, Ref& ref);
  bool constant_cells(llvm::Constant* constant, std::vector<uint64_t>& cells);
  bool scalar_constant(llvm::Constant* constant, uint64_t& cell);
  bool decode_instruction(llvm::Instruction& inst, Op& op);
  bool decode_operands(llvm::Instruction& inst, Op& op, unsigned count);
  bool decode_cast(llvm::CastInst& cast, Op& op);
  bool decode_gep(llvm::GetElementPtrInst& gep, Op& op);
  bool decode_call(llvm::CallInst& call, Op& op);
  bool decode_atomic(llvm::AtomicRMWInst& atomic, Op& op);
  bool decode_phis(llvm::BasicBlock& block, Block& out);
  void layout_lds();

  llvm::Module& module_;
  const llvm::DataLayout& layout_;
  Program& program_;
  std::string& error_;
  std::unordered_map<const llvm::Value*, uint32_t> slots_;
  std::unordered_map<const llvm::Constant*, uint32_t> constants_;
  std::map<const llvm::GlobalVariable*, uint64_t> lds_arrays_;  // index in Program::lds
  std::unordered_map<const llvm::BasicBlock*, int> block_index_;
  llvm::ModuleSlotTracker slots_tracker_;
};

uint32_t Decoder::new_slot(int width) {
  program_.slot_width.push_back(width);
  program_.slot_offset.push_back(program_.cells_per_lane);  // scaled by the wave size at run time
  program_.cells_per_lane += static_cast<uint32_t>(width);
  return static_cast<uint32_t>(program_.slot_width.size() - 1);
}

void Decoder::layout_lds() {
  for (llvm::GlobalVariable& global : module_.globals()) {
    if (global.getAddressSpace() != 3) continue;
    uint64_t align = global.getAlign() ? global.getAlign()->value() : 16;
    uint64_t size = layout_.getTypeAllocSize(global.getValueType());
    program_.lds_bytes = (program_.lds_bytes + align - 1) / align * align;
    lds_arrays_[&global] = program_.lds.size();
    program_.lds.push_back({global.getName().str(), program_.lds_bytes, size});
    program_.lds_bytes += size;
  }
}

bool Decoder::scalar_constant(llvm::Constant* constant, uint64_t& cell) {
  if (auto* integer = llvm::dyn_cast<llvm::ConstantInt>(constant)) {
    if (integer->getBitWidth() > 64) return fail("integer constant wider than 64 bits: " + printed(*constant));
    cell = integer->getZExtValue();
  } else if (auto* real = llvm::dyn_cast<llvm::ConstantFP>(constant)) {
    cell = real->getValueAPF().bitcastToAPInt().getZExtValue();
  } else if (llvm::isa<llvm::UndefValue>(constant) || llvm::isa<llvm::ConstantPointerNull>(constant) ||
             llvm::isa<llvm::ConstantAggregateZero>(constant)) {
    cell = 0;  // poison/undef lanes hold 0 (a kernel that reads them computes garbage, as hardware may)
  } else if (auto* global = llvm::dyn_cast<llvm::GlobalVariable>(constant)) {
    auto found = lds_arrays_.find(global);
    if (found == lds_arrays_.end()) return fail("global @" + global->getName().str() + " is not in LDS (addrspace(3))");
    cell = make_lds_pointer(found->second + 1, 0);
  } else {
    return fail("unsupported constant: " + printed(*constant));
  }
  return true;
}

bool Decoder::constant_cells(llvm::Constant* constant, std::vector<uint64_t>& cells) {
  int width = lanes_of(constant->getType());
  cells.assign(width, 0);
  if (width == 1) return scalar_constant(constant, cells[0]);
  for (int e = 0; e < width; ++e) {
    llvm::Constant* element = constant->getAggregateElement(static_cast<unsigned>(e));
    if (!element) return fail("unsupported vector constant: " + printed(*constant));
    if (!scalar_constant(element, cells[e])) return false;
  }
  return true;
}

bool Decoder::ref_of(llvm::Value* value, Ref& ref) {
  auto found = slots_.find(value);
  if (found != slots_.end()) {
    ref = {found->second, false};
    return true;
  }
  auto* constant = llvm::dyn_cast<llvm::Constant>(value);
  if (!constant) return fail("operand " + printed(*value) + " has no value here");
  auto cached = constants_.find(constant);
  if (cached != constants_.end()) {
    ref = {cached->second, true};
    return true;
  }
  std::vector<uint64_t> cells;
  if (!constant_cells(constant, cells)) return false;
  ref = {static_cast<uint32_t>(program_.constants.size()), true};
  program_.constants.insert(program_.constants.end(), cells.begin(), cells.end());
  constants_[constant] = ref.index;
  return true;
}

bool Decoder::decode_operands(llvm::Instruction& inst, Op& op, unsigned count) {
  for (unsigned i = 0; i < count; ++i) {
    Ref ref;
    if (!ref_of(inst.getOperand(i), ref)) return false;
    op.operands.push_back(ref);
  }
  return true;
}

bool Decoder::decode_cast(llvm::CastInst& cast, Op& op) {
  static const std::map<unsigned, Kind> kinds = {
      {llvm::Instruction::ZExt, Kind::ZExt},       {llvm::Instruction::SExt, Kind::SExt},
      {llvm::Instruction::Trunc, Kind::Trunc},     {llvm::Instruction::FPExt, Kind::FPExt},
      {llvm::Instruction::FPTrunc, Kind::FPTrunc}, {llvm::Instruction::FPToSI, Kind::FPToSI},
      {llvm::Instruction::FPToUI, Kind::FPToUI},   {llvm::Instruction::SIToFP, Kind::SIToFP},
      {llvm::Instruction::UIToFP, Kind::UIToFP},   {llvm::Instruction::BitCast, Kind::BitCast},
      {llvm::Instruction::AddrSpaceCast, Kind::AddrSpaceCast}};
  auto found = kinds.find(cast.getOpcode());
  if (found == kinds.end()) return fail("unsupported instruction: " + op.text);
  op.kind = found->second;
  if (!element_type_of(cast.getSrcTy(), op.source)) return fail("unsupported operand type: " + op.text);
  op.source_width = lanes_of(cast.getSrcTy());
#if LLVM_VERSION_MAJOR >= 18
  if (op.kind == Kind::ZExt) op.nneg = cast.hasNonNeg();
#endif
  return decode_operands(cast, op, 1);
}

bool Decoder::decode_gep(llvm::GetElementPtrInst& gep, Op& op) {
  if (op.width != 1) return fail("vector getelementptr is not supported: " + op.text);
  op.kind = Kind::GetElementPtr;
#if LLVM_VERSION_MAJOR >= 19
  op.nuw = gep.hasNoUnsignedWrap();
#endif
  Ref base;
  if (!ref_of(gep.getPointerOperand(), base)) return false;
  op.operands.push_back(base);
  for (auto it = llvm::gep_type_begin(gep), end = llvm::gep_type_end(gep); it != end; ++it) {
    llvm::Value* index = it.getOperand();
    if (llvm::StructType* structure = it.getStructTypeOrNull()) {
      uint64_t field = llvm::cast<llvm::ConstantInt>(index)->getZExtValue();
      op.offset += static_cast<int64_t>(layout_.getStructLayout(structure)->getElementOffset(field));
      continue;
    }
    int64_t scale = static_cast<int64_t>(layout_.getTypeAllocSize(it.getIndexedType()));
    if (auto* constant = llvm::dyn_cast<llvm::ConstantInt>(index)) {
      op.offset += constant->getSExtValue() * scale;
      continue;
    }
    Ref ref;
    if (!ref_of(index, ref)) return false;
    op.operands.push_back(ref);
    op.scales.push_back(scale);
    op.source.bits = int(index->getType()->getIntegerBitWidth());  // all variable indices share one width here
  }
  return true;
}

bool Decoder::decode_call(llvm::CallInst& call, Op& op) {
  llvm::Function* callee = call.getCalledFunction();
  if (!callee || !callee->isIntrinsic()) return fail("unsupported call (not an intrinsic): " + op.text);
  std::string name = callee->getName().str();
  op.kind = Kind::Intrinsic;
  std::string why;
  if (!classify_intrinsic(name, program_.arch, op, program_.mma_ops, why)) return fail(why + ": " + op.text);
  if (op.mma >= 0) {  // the operand widths the layout table must match
    MmaOp& mma = program_.mma_ops[size_t(op.mma)];
    const MmaOperands at = mma_operands(mma);
    if (call.arg_size() <= at.c) return fail("too few operands for a matrix instruction: " + op.text);
    const unsigned positions[3] = {at.a, at.b, at.c};
    for (int i = 0; i < 3; ++i) mma.widths[i] = lanes_of(call.getArgOperand(positions[i])->getType());
    mma.widths[3] = op.width;
    if (mma.fp8 != Fp8::None) mma.widths[0] *= 8, mma.widths[1] *= 8;  // 8 fp8 values to each i64 element
    if (mma.int8_per_element) mma.widths[0] *= mma.int8_per_element, mma.widths[1] *= mma.int8_per_element;
  }
  if (!call.arg_empty()) {
    if (!element_type_of(call.getArgOperand(0)->getType(), op.source)) return fail("unsupported operand type: " + op.text);
    op.source_width = lanes_of(call.getArgOperand(0)->getType());
  }
  return decode_operands(call, op, call.arg_size());
}

// The atomics the executor models: an i32 add, monotonic, at agent or workgroup scope (the scope
// decides which other atomics it is atomic with: race.h). Anything else is refused by name.
bool Decoder::decode_atomic(llvm::AtomicRMWInst& atomic, Op& op) {
  if (atomic.getOperation() != llvm::AtomicRMWInst::Add || !atomic.getType()->isIntegerTy(32))
    return fail("only an i32 atomicrmw add is supported: " + op.text);
  if (atomic.getOrdering() != llvm::AtomicOrdering::Monotonic)
    return fail("only a monotonic atomicrmw is supported: " + op.text);
  llvm::SmallVector<llvm::StringRef, 8> scopes;
  atomic.getContext().getSyncScopeNames(scopes);
  const unsigned id = atomic.getSyncScopeID();
  const llvm::StringRef scope = id < scopes.size() ? scopes[id] : "";
  if (scope != "agent" && scope != "workgroup")
    return fail("only syncscope(\"agent\") or syncscope(\"workgroup\") is supported: " + op.text);
  op.kind = Kind::AtomicAdd, op.workgroup_scope = scope == "workgroup";
  op.immediate = static_cast<int64_t>(atomic.getAlign().value());
  return decode_operands(atomic, op, 2);
}

bool Decoder::decode_instruction(llvm::Instruction& inst, Op& op) {
  op.text = printed(inst, slots_tracker_);
  if (!inst.getType()->isVoidTy()) {
    if (!element_type_of(inst.getType(), op.type)) return fail("unsupported result type: " + op.text);
    op.width = lanes_of(inst.getType());
  }
  static const std::map<unsigned, Kind> binary = {
      {llvm::Instruction::Add, Kind::Add},   {llvm::Instruction::Sub, Kind::Sub},   {llvm::Instruction::Mul, Kind::Mul},
      {llvm::Instruction::UDiv, Kind::UDiv}, {llvm::Instruction::SDiv, Kind::SDiv}, {llvm::Instruction::URem, Kind::URem},
      {llvm::Instruction::SRem, Kind::SRem}, {llvm::Instruction::Shl, Kind::Shl},   {llvm::Instruction::LShr, Kind::LShr},
      {llvm::Instruction::AShr, Kind::AShr}, {llvm::Instruction::And, Kind::And},   {llvm::Instruction::Or, Kind::Or},
      {llvm::Instruction::Xor, Kind::Xor},   {llvm::Instruction::FAdd, Kind::FAdd}, {llvm::Instruction::FSub, Kind::FSub},
      {llvm::Instruction::FMul, Kind::FMul}, {llvm::Instruction::FDiv, Kind::FDiv}};
  auto found = binary.find(inst.getOpcode());
  if (found != binary.end()) {
    op.kind = found->second;
    op.source = op.type;
    if (auto* overflowing = llvm::dyn_cast<llvm::OverflowingBinaryOperator>(&inst)) {
      op.nsw = overflowing->hasNoSignedWrap();
      op.nuw = overflowing->hasNoUnsignedWrap();
    }
    if (auto* exact = llvm::dyn_cast<llvm::PossiblyExactOperator>(&inst)) op.exact = exact->isExact();
#if LLVM_VERSION_MAJOR >= 18
    if (auto* disjoint = llvm::dyn_cast<llvm::PossiblyDisjointInst>(&inst)) op.disjoint = disjoint->isDisjoint();
#endif
    return decode_operands(inst, op, 2);
  }
  if (auto* cast = llvm::dyn_cast<llvm::CastInst>(&inst)) return decode_cast(*cast, op);
  if (auto* gep = llvm::dyn_cast<llvm::GetElementPtrInst>(&inst)) return decode_gep(*gep, op);
  if (auto* call = llvm::dyn_cast<llvm::CallInst>(&inst)) return decode_call(*call, op);
  switch (inst.getOpcode()) {
    case llvm::Instruction::FNeg:
      op.kind = Kind::FNeg, op.source = op.type;
      return decode_operands(inst, op, 1);
    case llvm::Instruction::ICmp:
    case llvm::Instruction::FCmp:
      op.kind = inst.getOpcode() == llvm::Instruction::ICmp ? Kind::ICmp : Kind::FCmp;
      op.predicate = llvm::cast<llvm::CmpInst>(inst).getPredicate();
      element_type_of(inst.getOperand(0)->getType(), op.source);
      return decode_operands(inst, op, 2);
    case llvm::Instruction::Select:
      op.kind = Kind::Select;
      op.source_width = lanes_of(inst.getOperand(0)->getType());
      return decode_operands(inst, op, 3);
    case llvm::Instruction::Freeze:
      op.kind = Kind::Freeze;
      return decode_operands(inst, op, 1);
    case llvm::Instruction::ExtractElement:
      op.kind = Kind::ExtractElement;
      op.source_width = lanes_of(inst.getOperand(0)->getType());
      return decode_operands(inst, op, 2);
    case llvm::Instruction::InsertElement:
      op.kind = Kind::InsertElement;
      return decode_operands(inst, op, 3);
    case llvm::Instruction::ShuffleVector: {
      auto& shuffle = llvm::cast<llvm::ShuffleVectorInst>(inst);
      op.kind = Kind::ShuffleVector;
      op.source_width = lanes_of(inst.getOperand(0)->getType());
      for (int index : shuffle.getShuffleMask()) op.mask.push_back(index);
      return decode_operands(inst, op, 2);
    }
    case llvm::Instruction::Load: {
      auto& load = llvm::cast<llvm::LoadInst>(inst);
      op.kind = Kind::Load, op.immediate = static_cast<int64_t>(load.getAlign().value());
      return decode_operands(inst, op, 1);
    }
    case llvm::Instruction::Store: {
      auto& store = llvm::cast<llvm::StoreInst>(inst);
      op.kind = Kind::Store, op.immediate = static_cast<int64_t>(store.getAlign().value());
      llvm::Type* stored = store.getValueOperand()->getType();
      if (!element_type_of(stored, op.type)) return fail("unsupported stored type: " + op.text);
      op.width = lanes_of(stored);
      return decode_operands(inst, op, 2);
    }
    case llvm::Instruction::AtomicRMW:
      return decode_atomic(llvm::cast<llvm::AtomicRMWInst>(inst), op);
    case llvm::Instruction::Fence:
      op.kind = Kind::Fence;  // LDS and global memory are coherent in this model: a fence orders nothing more
      return true;
    case llvm::Instruction::Br: {
      auto& branch = llvm::cast<llvm::BranchInst>(inst);
      op.kind = branch.isConditional() ? Kind::CondBranch : Kind::Branch;
      for (unsigned i = 0; i < branch.getNumSuccessors(); ++i) op.targets[i] = block_index_.at(branch.getSuccessor(i));
      return branch.isConditional() ? decode_operands(inst, op, 1) : true;
    }
    case llvm::Instruction::Ret:
      if (inst.getNumOperands() != 0) return fail("a kernel returns void: " + op.text);
      op.kind = Kind::Return;
      return true;
    default:
      return fail("unsupported instruction: " + op.text);
  }
}

bool Decoder::decode_phis(llvm::BasicBlock& block, Block& out) {
  for (llvm::PHINode& phi : block.phis()) {
    uint32_t slot = slots_.at(&phi);
    for (unsigned i = 0; i < phi.getNumIncomingValues(); ++i) {
      int from = block_index_.at(phi.getIncomingBlock(i));
      PhiEdge* edge = nullptr;
      for (PhiEdge& candidate : out.phis)
        if (candidate.from == from) edge = &candidate;
      if (!edge) {
        out.phis.push_back({from, {}, {}});
        edge = &out.phis.back();
      }
      Ref ref;
      if (!ref_of(phi.getIncomingValue(i), ref)) return false;
      edge->copies.push_back({slot, ref});
      edge->widths.push_back(lanes_of(phi.getType()));
    }
  }
  for (PhiEdge& edge : out.phis)
    for (const auto& copy : edge.copies)
      for (const auto& other : edge.copies) edge.staged |= !copy.second.constant && copy.second.index == other.first;
  return true;
}

bool Decoder::run(llvm::Function& function) {
  program_.kernel = function.getName().str();
  layout_lds();
  for (llvm::Argument& argument : function.args()) {
    Param param;
    param.name = argument.getName().str();
    if (!element_type_of(argument.getType(), param.type) || lanes_of(argument.getType()) != 1)
      return fail("unsupported kernel parameter %" + param.name);
    param.slot = new_slot(1);
    param.readonly = argument.hasAttribute(llvm::Attribute::ReadOnly);
    slots_[&argument] = param.slot;
    program_.params.push_back(param);
  }
  for (llvm::BasicBlock& block : function) {
    block_index_[&block] = static_cast<int>(block_index_.size());
    for (llvm::Instruction& inst : block)
      if (!inst.getType()->isVoidTy()) slots_[&inst] = new_slot(lanes_of(inst.getType()));
  }
  llvm::PostDominatorTree post_dominators(function);
  for (llvm::BasicBlock& block : function) {
    Block out;
    out.name = block.getName().str();
    if (auto* node = post_dominators.getNode(&block))
      if (auto* parent = node->getIDom())
        if (parent->getBlock()) out.post_dominator = block_index_.at(parent->getBlock());
    if (!decode_phis(block, out)) return false;
    for (llvm::Instruction& inst : block) {
      if (llvm::isa<llvm::PHINode>(inst)) continue;
      Op op;
      if (!decode_instruction(inst, op)) return false;
      if (!inst.getType()->isVoidTy()) op.result = slots_.at(&inst);
      out.ops.push_back(std::move(op));
    }
    program_.blocks.push_back(std::move(out));
  }
  return true;
}

std::string target_cpu(const llvm::Function& function) {
  llvm::Attribute cpu = function.getFnAttribute("target-cpu");
  return cpu.isValid() ? cpu.getValueAsString().str() : "";
}

}  // namespace

std::vector<std::string> kernel_names(const llvm::Module& module) {
  std::vector<std::string> names;
  for (const llvm::Function& function : module)
    if (!function.isDeclaration() && function.getCallingConv() == llvm::CallingConv::AMDGPU_KERNEL)
      names.push_back(function.getName().str());
  return names;
}

bool decode_kernel(llvm::Module& module, const std::string& kernel, Program& program, std::string& error) {
  std::vector<std::string> names = kernel_names(module);
  auto named = kernel.empty() ? names.begin() : std::find(names.begin(), names.end(), kernel);
  llvm::Function* chosen = named == names.end() ? nullptr : module.getFunction(*named);
  if (!chosen) {
    error = kernel.empty() ? "the module defines no amdgpu_kernel" : "the module has no kernel @" + kernel;
    return false;
  }
  program.arch = target_cpu(*chosen);
  if (program.arch.empty()) {
    error = "kernel @" + chosen->getName().str() + " has no \"target-cpu\" attribute (the arch decides the wave size)";
    return false;
  }
  program.wave_size = wave_size_of(program.arch);
  Decoder decoder(module, program, error);
  if (!decoder.run(*chosen)) return false;
  program.constant_lanes.resize(program.constants.size() * size_t(program.wave_size));
  for (size_t c = 0; c < program.constants.size(); ++c)
    std::fill_n(&program.constant_lanes[c * size_t(program.wave_size)], program.wave_size, program.constants[c]);
  return true;
}

}  // namespace kemit::exec
