// Lowering: canonical IR -> LLVM IR text for one flavor. Mirrors py_engine/kemit/llvm/lower.py.
#include "kemit/llvm/lower.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kemit/ir/types.h"
#include "kemit/llvm/spelling.h"
#include "kemit/target/arch.h"

namespace kemit::llvm {

using ir::Op;
using ir::OpKind;
using ir::Value;
using namespace std::string_view_literals;

const std::map<std::string, std::string> KERNEL_ATTRIBUTES = {
    {"flat_work_group_size", "amdgpu-flat-work-group-size"}, {"waves_per_eu", "amdgpu-waves-per-eu"}};
const std::map<std::string, std::pair<int, int>> DISPATCH_OFFSETS = {{"x", {4, 12}}, {"y", {6, 16}}, {"z", {8, 20}}};

namespace {

// Python's truthiness of an attribute value: a present flag or a non-zero/non-empty value.
bool truthy(const ir::Attr& attr) {
  return attr.kind == ir::Attr::Kind::flag || (attr.kind == ir::Attr::Kind::integer ? attr.integer != 0
                                                                                   : !attr.text.empty());
}

bool has_flag(const ir::Attrs& attrs, std::string_view key) {
  // Python's attrs.get(key).
  auto found = attrs.find(key);
  return found != attrs.end() && truthy(found->second);
}

std::string join(const std::vector<std::string_view>& items, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += separator;
    out += items[i];
  }
  return out;
}

// C++ only: a short text spelled on the stack (an intrinsic's name), with TextBuffer's appends.
class StackText {
 public:
  void append(const char* data, size_t size) {
    if (size > sizeof text_ - size_) throw LowerError("intrinsic name longer than " + std::to_string(sizeof text_) + " bytes");
    std::memcpy(text_ + size_, data, size);
    size_ += size;
  }
  StackText& operator+=(std::string_view piece) {
    append(piece.data(), piece.size());
    return *this;
  }
  StackText& operator+=(char c) { return *this += std::string_view(&c, 1); }
  std::string_view view() const { return std::string_view(text_, size_); }

 private:
  char text_[128];
  size_t size_ = 0;
};

}  // namespace

std::string processor_gate(const std::string& arch_name, const Flavor& flavor) {
  const auto& processors = flavor.processors;
  if (std::find(processors.begin(), processors.end(), arch_name) != processors.end()) return "";
  return fmt::format("{arch} needs flavor {oldest} or newer (got {flavor})", fmt::arg("arch", arch_name),
                     fmt::arg("oldest", target::find_arch(arch_name).oldest_flavor), fmt::arg("flavor", flavor.name));
}

std::string lower_kernel(const ir::Kernel& kernel, const Flavor& flavor) {
  return lower_module({std::cref(kernel)}, flavor);
}

std::string lower_module(const std::vector<std::reference_wrapper<const ir::Kernel>>& kernels, const Flavor& flavor) {
  std::vector<std::string_view> all;  // Python's names + buffers
  size_t buffers = 0;
  for (const ir::Kernel& kernel : kernels) all.push_back(kernel.name);
  for (const ir::Kernel& kernel : kernels)
    for (const auto& buffer : kernel.lds) all.push_back(buffer.name), ++buffers;
  std::vector<std::string_view> sorted = all;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw LowerError(fmt::format("kernel and LDS names must be unique in a module (got {names})",
                                 fmt::arg("names", fmt::join(all, ", "))));
  const ir::Kernel& first = kernels[0].get();
  for (const ir::Kernel& kernel : kernels)
    if (kernel.arch != first.arch) throw LowerError("the kernels of a module must share one arch");
  // C++ only: Python joins a list of lines; C++ writes every line, the functions' included, into
  // one text per thread, kept from one module to the next (no regrowth, no copy per function).
  thread_local ir::TextBuffer out(1 << 16);
  out.clear();
  std::vector<Lowering> lowerings;
  lowerings.reserve(kernels.size());
  for (size_t index = 0; index < kernels.size(); ++index)
    lowerings.emplace_back(kernels[index].get(), flavor, static_cast<int>(index), out);
  std::vector<std::string_view> names(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(kernels.size()));
  out += "; kemit ";
  if (names.size() == 1)
    append_pieces(out, "kernel ", names[0]);
  else
    append_pieces(out, "kernels ", join(names, ", "));
  append_pieces(out, " for ", first.arch, " at ", flavor.name, '\n');
  append_pieces(out, "target datalayout = \"", flavor.datalayout, "\"\n");
  out += "target triple = \"amdgcn-amd-amdhsa\"\n\n";
  for (const auto& lowering : lowerings) lowering.lds_lines(out);
  if (buffers) out += '\n';
  for (auto& lowering : lowerings) {
    lowering.function_lines();
    out += '\n';
  }
  std::vector<const Lowering::Declaration*> declarations;
  for (const auto& lowering : lowerings)
    for (const auto& declaration : lowering.declared()) {
      auto same = std::find_if(declarations.begin(), declarations.end(),
                               [&](const Lowering::Declaration* known) { return known->name() == declaration.name(); });
      if (same == declarations.end())
        declarations.push_back(&declaration);
      else if ((*same)->text != declaration.text)
        throw LowerError(
            fmt::format("kernels of one module declare {name} differently", fmt::arg("name", declaration.name())));
    }
  std::sort(declarations.begin(), declarations.end(),
            [](const Lowering::Declaration* a, const Lowering::Declaration* b) { return a->name() < b->name(); });
  for (const auto* declaration : declarations) append_pieces(out, declaration->text, '\n');
  if (!declarations.empty()) out += '\n';
  for (const auto& lowering : lowerings) {
    append_pieces(out, "attributes #", lowering.index(), " = { ");
    lowering.kernel_attributes(out);
    out += " }\n";
  }
  return out.str();
}

Lowering::Lowering(const ir::Kernel& kernel, const Flavor& flavor, int index, ir::TextBuffer& out)
    : kernel(kernel), flavor(flavor), names(256, NOT_NAMED), lines(out), index_(index) {}

// ---- module ---------------------------------------------------------------------------------
void Lowering::lds_lines(ir::TextBuffer& out) const {
  for (const auto& buffer : kernel.lds)
    append_pieces(out, '@', buffer.name, " = internal unnamed_addr addrspace(3) global [", buffer.count, " x ",
                  buffer.element, "] poison, align ", buffer.align, '\n');
}

void Lowering::function_lines() {
  append_pieces(lines, "define amdgpu_kernel void @", kernel.name, '(');
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    if (i) lines += ", ";
    param_text(kernel.params[i], lines);
  }
  append_pieces(lines, ") #", index_, " {\nentry:\n");
  for (const auto& buffer : kernel.lds) set_name(buffer.value.id, "@" + buffer.name);
  lower_region(kernel.body);
  lines += "  ret void\n}\n";
}

void Lowering::kernel_attributes(ir::TextBuffer& out) const {
  // Python's pairs dict, sorted by key: target-cpu, uniform-work-group-size and at most one more
  // per KERNEL_ATTRIBUTES entry (a later value of the same key replaces the earlier one).
  std::vector<std::pair<std::string_view, std::string_view>> pairs = {{"target-cpu", kernel.arch},
                                                                      {"uniform-work-group-size", "true"}};
  for (const auto& [key, value] : kernel.attrs) {
    auto spelled = KERNEL_ATTRIBUTES.find(key);
    if (spelled == KERNEL_ATTRIBUTES.end())
      throw LowerError(fmt::format("kernel attribute '{key}' has no LLVM spelling", fmt::arg("key", key)));
    auto same = std::find_if(pairs.begin(), pairs.end(), [&](const auto& pair) { return pair.first == spelled->second; });
    if (same == pairs.end())
      pairs.emplace_back(spelled->second, value);
    else
      same->second = value;
  }
  std::sort(pairs.begin(), pairs.end());
  for (size_t i = 0; i < pairs.size(); ++i)
    append_pieces(out, i ? " \""sv : "\""sv, pairs[i].first, "\"=\"", pairs[i].second, '"');
}

void Lowering::param_text(const ir::Param& param, ir::TextBuffer& out) {
  set_name(param.value.id, "%" + param.name);
  append_llvm_type(out, param.value.type);
  const auto& attrs = param.attrs;
  if (has_flag(attrs, "noalias")) out += " noalias";
  if (has_flag(attrs, "nocapture")) out += flavor.captures_attr ? " captures(none)"sv : " nocapture"sv;
  for (const char* flag : {"readonly", "writeonly"})
    if (has_flag(attrs, flag)) append_pieces(out, ' ', flag);
  auto align = attrs.find("align");
  if (align != attrs.end()) append_pieces(out, " align ", align->second);
  append_pieces(out, " %", param.name);
}

// ---- helpers --------------------------------------------------------------------------------
void Lowering::start_block(const std::string& label) {
  append_pieces(lines, label, ":\n");
  block = label;
}

std::string Lowering::new_block_prefix(std::string_view kind) {
  std::string prefix = text_of(kind, blocks_made);
  blocks_made += 1;
  return prefix;
}

void Lowering::declare(std::string_view name, std::string_view result, Args args) {
  // Python stores the text by name; C++ spells it into a kept buffer and stores it only when it
  // is new or differs (most calls repeat an intrinsic already declared).
  ir::TextBuffer& text = declaration_scratch;
  text.clear();
  append_pieces(text, "declare ", result, " @");
  size_t name_at = text.size();
  append_pieces(text, name, '(');
  for (size_t i = 0; i < args.size; ++i) append_pieces(text, i ? ", "sv : ""sv, args.data[i].type);
  text += ')';
  for (auto& known : declarations)
    if (known.name() == name) {
      if (known.text != text.view()) known = Declaration{std::string(text.view()), name_at, name.size()};
      return;
    }
  declarations.push_back(Declaration{std::string(text.view()), name_at, name.size()});
}

Call Lowering::call(std::string_view name, std::string_view result_type, Args args) {
  declare(name, result_type, args);
  return Call{result_type, name, args};
}

// value, typed, define and name_slot: inline in lower.h (they run for every operand).

void Lowering::no_name(const Value& v) {
  throw std::out_of_range("no LLVM name for value %" + std::to_string(v.id));
}

void Lowering::grow_names(size_t at) { names.resize(std::max(at + 1, 2 * names.size()), NOT_NAMED); }

void Lowering::set_number(int id, int64_t number) {
  numbers.push_back(number);
  name_slot(id) = -static_cast<int>(numbers.size());
}

void Lowering::set_name(int id, std::string text) {
  custom_names.push_back(std::move(text));
  name_slot(id) = CUSTOM + static_cast<int>(custom_names.size() - 1);
}

// ---- ops --------------------------------------------------------------------------------------
void Lowering::lower_region(const ir::Region& region) {
  for (const auto& op : region.ops) {
    if (op.name == OpKind::yield_values) continue;
    (this->*handler(op.name))(op);
  }
}

Lowering::Handler Lowering::handler(OpKind name) const {
  // C++ only: the answer for each op kind is looked up once (handler_of), then read from a table.
  static const std::vector<Handler> table = [] {
    std::vector<Handler> out;
    for (const auto& row : tables::OPS) out.push_back(handler_of(row.kind));
    return out;
  }();
  size_t at = static_cast<size_t>(name);
  if (at < table.size() && table[at]) return table[at];
  throw LowerError(fmt::format("no lowering for op '{name}'", fmt::arg("name", tables::op_name(name))));
}

Lowering::Handler Lowering::handler_of(OpKind name) {
  // Python looks up the three op groups, then `lower_<name>`: the same order, by the op's row.
  switch (tables::op_row(name).group) {
    case tables::OpGroup::int_binary: return &Lowering::lower_int_binary;
    case tables::OpGroup::float_math: return &Lowering::lower_float_op;
    case tables::OpGroup::cast: return &Lowering::lower_cast;
    default: break;
  }
  switch (name) {
    case OpKind::constant: return &Lowering::lower_const;
    case OpKind::workitem_id: return &Lowering::lower_workitem_id;
    case OpKind::workgroup_id: return &Lowering::lower_workgroup_id;
    case OpKind::num_workgroups: return &Lowering::lower_num_workgroups;
    case OpKind::icmp: return &Lowering::lower_icmp;
    case OpKind::fcmp: return &Lowering::lower_fcmp;
    case OpKind::select: return &Lowering::lower_select;
    case OpKind::ptr_add: return &Lowering::lower_ptr_add;
    case OpKind::load: return &Lowering::lower_load;
    case OpKind::store: return &Lowering::lower_store;
    case OpKind::atomic_add: return &Lowering::lower_atomic_add;
    case OpKind::barrier: return &Lowering::lower_barrier;
    case OpKind::readfirstlane: return &Lowering::lower_readfirstlane;
    case OpKind::extract_element: return &Lowering::lower_extract_element;
    case OpKind::insert_element: return &Lowering::lower_insert_element;
    case OpKind::shuffle: return &Lowering::lower_shuffle;
    case OpKind::bpermute: return &Lowering::lower_bpermute;
    case OpKind::update_dpp: return &Lowering::lower_update_dpp;
    case OpKind::mma: return &Lowering::lower_mma;
    case OpKind::for_loop: return &Lowering::lower_for;
    case OpKind::if_then: return &Lowering::lower_if;
    default: return nullptr;
  }
}

void Lowering::lower_const(const Op& op) {
  const Value& result = op.results[0];
  const ir::Attr& value = op.attrs.at("value");
  // C++ only: a scalar integer's literal (spelling.cpp's str(value)) is kept as its number.
  if (result.type.kind == ir::TypeKind::scalar && result.type.name != ir::ScalarKind::i1 &&
      !ir::scalar_row(result.type.name).is_float && value.kind == ir::Attr::Kind::integer)
    return set_number(result.id, value.integer);
  set_name(result.id, constant_literal(result.type, value, flavor));
}

void Lowering::lower_workitem_id(const Op& op) {
  std::string name = "llvm.amdgcn.workitem.id." + op.attrs.at("dim").text;
  emit(define(op.results[0]), " = ", call(name, "i32", {}));
}

void Lowering::lower_workgroup_id(const Op& op) {
  std::string name = "llvm.amdgcn.workgroup.id." + op.attrs.at("dim").text;
  emit(define(op.results[0]), " = ", call(name, "i32", {}));
}

// grid size / workgroup size, both read from the HSA dispatch packet.
void Lowering::lower_num_workgroups(const Op& op) {
  const Value& result = op.results[0];
  auto [size_offset, grid_offset] = DISPATCH_OFFSETS.at(op.attrs.at("dim").text);
  Name packet = define(result, ".packet");
  emit(packet, " = ", call("llvm.amdgcn.dispatch.ptr", "ptr addrspace(4)", {}));
  // Python's (role, offset, type); C++ keeps the role's two suffixes (".size.addr", ".size") as text.
  struct Read {
    std::string_view address_role, role;
    int offset;
    std::string_view t;
  };
  const Read reads[] = {{".size.addr", ".size", size_offset, "i16"}, {".grid.addr", ".grid", grid_offset, "i32"}};
  for (const auto& [address_role, role, offset, t] : reads) {
    Name address = define(result, address_role);
    emit(address, " = getelementptr inbounds i8, ptr addrspace(4) ", packet, ", i64 ", offset);
    emit(define(result, role), " = load ", t, ", ptr addrspace(4) ", address, ", align ",
         std::stoi(std::string(t.substr(1))) / 8);
  }
  Name size32 = define(result, ".size32");
  emit(size32, " = zext i16 ", define(result, ".size"), " to i32");
  emit(define(result), " = udiv i32 ", define(result, ".grid"), ", ", size32);
}

void Lowering::lower_int_binary(const Op& op) {
  const Value& a = op.operands[0];
  const Value& b = op.operands[1];
  // Python joins the opcode and its flags; C++ reads the attributes once and spells the flags.
  bool nuw = false, nsw = false, disjoint = false;
  for (const auto& [key, attr] : op.attrs) {
    if (!truthy(attr)) continue;
    std::string_view flag = key;
    nuw = nuw || flag == "nuw"sv;
    nsw = nsw || flag == "nsw"sv;
    disjoint = disjoint || flag == "disjoint"sv;
  }
  emit(define(op.results[0]), " = ", tables::op_row(op.name).llvm, nuw ? " nuw"sv : ""sv, nsw ? " nsw"sv : ""sv,
       disjoint && flavor.or_disjoint ? " disjoint"sv : ""sv, ' ', typed(a), ", ", value(b));
}

void Lowering::lower_float_op(const Op& op) {
  const Value& result = op.results[0];
  const tables::OpRow& row = tables::op_row(op.name);
  if (!row.llvm_intrinsic) {  // fneg a, or fadd a, b
    if (op.operands.size() == 1)
      emit(define(result), " = ", row.llvm, ' ', typed(op.operands[0]));
    else
      emit(define(result), " = ", row.llvm, ' ', typed(op.operands[0]), ", ", value(op.operands[1]));
    return;
  }
  std::string t = llvm_type(result.type);
  StackText name;
  append_pieces(name, row.llvm, '.', mangle(result.type));
  Arg args[3];  // fma's a, b, c at most
  if (op.operands.size() > std::size(args)) throw LowerError("float op with more than three operands");
  for (size_t i = 0; i < op.operands.size(); ++i) args[i] = Arg{t, value(op.operands[i])};
  emit(define(result), " = ", call(name.view(), t, Args{args, op.operands.size()}));
}

void Lowering::lower_icmp(const Op& op) {
  emit(define(op.results[0]), " = icmp ", op.attrs.at("pred").text, ' ', typed(op.operands[0]), ", ",
       value(op.operands[1]));
}

void Lowering::lower_fcmp(const Op& op) {
  emit(define(op.results[0]), " = fcmp ", op.attrs.at("pred").text, ' ', typed(op.operands[0]), ", ",
       value(op.operands[1]));
}

void Lowering::lower_select(const Op& op) {
  emit(define(op.results[0]), " = select ", typed(op.operands[0]), ", ", typed(op.operands[1]), ", ",
       typed(op.operands[2]));
}

void Lowering::lower_cast(const Op& op) {
  const Value& source = op.operands[0];
  const Value& result = op.results[0];
  const tables::OpRow& row = tables::op_row(op.name);
  bool bf16 = source.type.name == ir::ScalarKind::bf16 || result.type.name == ir::ScalarKind::bf16;
  bool float_cast = row.cast_from_float && row.cast_to_float;  // Python's FLOAT_CASTS
  if (result.type.kind == ir::TypeKind::vector && bf16 && float_cast && !flavor.vector_bf16_casts)
    return lower_cast_per_lane(op);
  std::string_view nneg = flavor.zext_nneg && has_flag(op.attrs, "nneg") ? " nneg"sv : ""sv;
  emit(define(result), " = ", row.llvm, nneg, ' ', typed(source), " to ", result.type);
}

// extractelement / scalar cast / insertelement, for casts a flavor's llc cannot select.
void Lowering::lower_cast_per_lane(const Op& op) {
  const Value& source = op.operands[0];
  const Value& result = op.results[0];
  ir::Type lane_type = ir::element_type(result.type);
  std::string vector = "poison";
  for (int lane = 0; lane < result.type.count; ++lane) {
    std::string index = std::to_string(lane);
    std::string extracted = ".e" + index, cast = ".c" + index, inserted_role = ".i" + index;
    Name element = define(result, extracted);
    emit(element, " = extractelement ", typed(source), ", i64 ", index);
    emit(define(result, cast), " = ", tables::op_row(op.name).llvm, ' ', ir::element_type(source.type), ' ', element,
         " to ", lane_type);
    bool last = lane + 1 == result.type.count;
    Name inserted = last ? define(result) : define(result, inserted_role);
    emit(inserted, " = insertelement ", result.type, ' ', vector, ", ", lane_type, ' ', define(result, cast),
         ", i64 ", index);
    vector = text_of(inserted);
  }
}

void Lowering::lower_ptr_add(const Op& op) {
  const Value& pointer = op.operands[0];
  const Value& index = op.operands[1];
  const Value& result = op.results[0];
  ir::Type element = ir::parse_type(op.attrs.at("element").text);
  Typed index_text = typed(index);
  // A 64-bit address takes an i64 offset: an i32 index is widened (it is in [0, 2^31)), an i64 one
  // (a row offset past 2^31) is the offset already.
  if ((pointer.type.space == ir::AddressSpace::global || pointer.type.space == ir::AddressSpace::constant) &&
      index.type == ir::scalar(ir::ScalarKind::i32)) {
    Name wide = define(result, ".idx");
    std::string_view nneg = flavor.zext_nneg ? " nneg"sv : ""sv;
    emit(wide, " = zext", nneg, ' ', index_text, " to i64");
    index_text = Typed{ir::scalar(ir::ScalarKind::i64), wide};
  }
  std::string_view inbounds = flavor.gep_nuw ? "inbounds nuw"sv : "inbounds"sv;
  emit(define(result), " = getelementptr ", inbounds, ' ', element, ", ", typed(pointer), ", ", index_text);
}

void Lowering::lower_load(const Op& op) {
  const Value& result = op.results[0];
  emit(define(result), " = load ", result.type, ", ", typed(op.operands[0]), ", align ", op.attrs.at("align"));
}

void Lowering::lower_store(const Op& op) {
  emit("store ", typed(op.operands[0]), ", ", typed(op.operands[1]), ", align ", op.attrs.at("align"));
}

void Lowering::lower_atomic_add(const Op& op) {
  const std::string_view operation = tables::op_row(op.name).llvm;
  emit(define(op.results[0]), " = atomicrmw ", operation, ' ', typed(op.operands[0]), ", ", typed(op.operands[1]),
       " syncscope(\"", op.attrs.at("scope"), "\") ", op.attrs.at("order"), ", align ", op.attrs.at("align"));
}

void Lowering::lower_barrier(const Op&) {
  emit("fence syncscope(\"workgroup\") release");
  emit(call("llvm.amdgcn.s.barrier", "void", {}));
  emit("fence syncscope(\"workgroup\") acquire");
}

void Lowering::lower_readfirstlane(const Op& op) {
  std::string_view name =
      flavor.readfirstlane_mangled ? "llvm.amdgcn.readfirstlane.i32"sv : "llvm.amdgcn.readfirstlane"sv;
  emit(define(op.results[0]), " = ", call(name, "i32", {{"i32", value(op.operands[0])}}));
}

// ---- structured control flow ---------------------------------------------------------------------
// Rotated loop: entry guard, body with phis, latch at the end of the body.
void Lowering::lower_for(const Op& op) {
  std::string prefix = new_block_prefix(tables::op_name(op.name));
  const Value& lo = op.operands[0];
  const Value& hi = op.operands[1];
  const Value& step = op.operands[2];
  // Python's inits (operands[3:]) and iters (args[1:]) are read in place.
  const ir::Region& region = op.regions[0];
  const Value& iv = region.args[0];
  std::string body_label = prefix + ".body", exit_label = prefix + ".exit";
  Name guard = define(iv, ".guard");
  emit(guard, " = icmp slt ", typed(lo), ", ", value(hi));
  emit("br i1 ", guard, ", label %", body_label, ", label %", exit_label);
  std::string preheader = block;
  start_block(body_label);
  const auto& yields = region.ops.back().operands;
  Name next_iv = define(iv, ".next");
  size_t phi_at = lines.size();
  for (const auto& arg : region.args) define(arg);
  lower_region(region);
  std::string latch = block;
  // The phis of (arg, init, back-edge value), spelled apart and put at phi_at: the iv's back
  // edge is its increment, each iter's the value yielded for it (zip stops at the shortest).
  size_t carried = std::min({region.args.size() - 1, op.operands.size() - 3, yields.size()});
  phi_scratch.clear();
  auto phi = [&](const Value& arg, const Value& init, const Name& back) {
    append_pieces(phi_scratch, "  ", value(arg), " = phi ", arg.type, " [ ", value(init), ", %", preheader, " ], [ ",
                  back, ", %", latch, " ]\n");
  };
  phi(iv, lo, next_iv);
  for (size_t i = 0; i < carried; ++i) phi(region.args[1 + i], op.operands[3 + i], value(yields[i]));
  lines.insert(phi_at, phi_scratch.view());
  emit(next_iv, " = add nsw i32 ", value(iv), ", ", value(step));
  Name again = define(iv, ".again");
  emit(again, " = icmp slt i32 ", next_iv, ", ", value(hi));
  emit("br i1 ", again, ", label %", body_label, ", label %", exit_label);
  start_block(exit_label);
  size_t results = std::min({op.results.size(), op.operands.size() - 3, yields.size()});
  for (size_t i = 0; i < results; ++i)
    emit(define(op.results[i]), " = phi ", op.results[i].type, " [ ", value(op.operands[3 + i]), ", %", preheader,
         " ], [ ", value(yields[i]), ", %", latch, " ]");
}

void Lowering::lower_if(const Op& op) {
  std::string prefix = new_block_prefix(tables::op_name(op.name));
  size_t count = op.regions.size() == 2 ? 2 : 1;
  const std::string labels[2] = {prefix + ".then", count == 2 ? prefix + ".else" : ""};
  std::string end = prefix + ".end";
  const std::string& otherwise = count == 2 ? labels[1] : end;
  emit("br ", typed(op.operands[0]), ", label %", labels[0], ", label %", otherwise);
  for (size_t i = 0; i < count && i < op.regions.size(); ++i) {
    start_block(labels[i]);
    lower_region(op.regions[i]);
    emit("br label %", end);
  }
  start_block(end);
}

}  // namespace kemit::llvm
