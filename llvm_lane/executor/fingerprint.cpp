// A Program's fingerprint (program.h): every field the run loop reads, in a fixed order, so that
// two programs with one fingerprint run alike on any launch. Only Op::text is left out: it is the
// instruction as its LLVM printed it, read by error messages alone.
#include <cstring>
#include <type_traits>

#include "program.h"

namespace kemit::exec {
namespace {

// A field added to one of these structs changes its size: the fingerprint must then write it
// too, or two programs that differ in it would share one run (the numerics lane's DIGEST).
static_assert(sizeof(ElementType) == 12 && sizeof(Ref) == 8 && sizeof(MmaOp) == 80 && sizeof(Param) == 56 &&
                  sizeof(LdsGlobal) == 48 && sizeof(PhiEdge) == 64 && sizeof(Block) == 88 && sizeof(Op) == 192 &&
                  sizeof(Program) == 280,
              "a field was added to the executor's Program: write it in fingerprint() below, then update the sizes");

class Writer {
 public:
  template <typename T>
  std::enable_if_t<std::is_arithmetic_v<T> || std::is_enum_v<T>> put(T value) {
    char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    out_.append(bytes, sizeof(T));
  }
  void put(const std::string& text) {
    put(uint64_t(text.size()));
    out_ += text;
  }
  template <typename T>
  void put(const std::vector<T>& items) {
    put(uint64_t(items.size()));
    for (const T& item : items) put(item);
  }
  template <typename A, typename B>
  void put(const std::pair<A, B>& pair) {
    put(pair.first);
    put(pair.second);
  }
  void put(const ElementType& type) {
    put(type.scalar);
    put(type.bits);
    put(type.address_space);
  }
  void put(const Ref& ref) {
    put(ref.index);
    put(ref.constant);
  }
  void put(const Op& op) {
    put(op.kind);
    put(op.intrinsic);
    put(op.type);
    put(op.source);
    put(op.width);
    put(op.source_width);
    put(op.result);
    put(op.operands);
    put(op.predicate);
    for (bool flag : {op.nsw, op.nuw, op.exact, op.nneg, op.disjoint, op.workgroup_scope}) put(flag);
    put(op.immediate);
    put(op.mask);
    put(op.scales);
    put(op.offset);
    put(op.targets[0]);
    put(op.targets[1]);
    put(op.mma);
  }
  void put(const PhiEdge& edge) {
    put(edge.from);
    put(edge.copies);
    put(edge.widths);
    put(edge.staged);
  }
  void put(const Block& block) {
    put(block.name);
    put(block.ops);
    put(block.phis);
    put(block.post_dominator);
  }
  void put(const MmaOp& mma) {
    put(mma.table);
    put(mma.m);
    put(mma.n);
    put(mma.k);
    put(mma.operand);
    put(mma.gfx1250_modifiers);
    for (int width : mma.widths) put(width);
    put(mma.fp8);
    put(mma.int8_per_element);
    put(mma.sign_flags);
  }
  void put(const Param& param) {
    put(param.name);
    put(param.type);
    put(param.slot);
    put(param.readonly);
  }
  void put(const LdsGlobal& lds) {
    put(lds.name);
    put(lds.offset);
    put(lds.size);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

}  // namespace

std::string fingerprint(const Program& program) {
  Writer writer;
  writer.put(program.kernel);
  writer.put(program.arch);
  writer.put(program.wave_size);
  writer.put(program.params);
  writer.put(program.blocks);
  writer.put(program.slot_offset);
  writer.put(program.slot_width);
  writer.put(program.cells_per_lane);
  writer.put(program.constants);  // constant_lanes is made from it and the wave size
  writer.put(program.lds);
  writer.put(program.lds_bytes);
  writer.put(program.mma_ops);
  return writer.take();
}

}  // namespace kemit::exec
