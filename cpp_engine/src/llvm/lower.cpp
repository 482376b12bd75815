// Lowering: canonical IR -> LLVM IR text for one flavor. Mirrors py_engine/kemit/llvm/lower.py.
#include "kemit/llvm/lower.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "kemit/ir/types.h"
#include "kemit/llvm/spelling.h"
#include "kemit/target/arch.h"

namespace kemit::llvm {

using ir::Op;
using ir::OpKind;
using ir::Value;

const std::map<std::string, std::string> KERNEL_ATTRIBUTES = {
    {"flat_work_group_size", "amdgpu-flat-work-group-size"}, {"waves_per_eu", "amdgpu-waves-per-eu"}};
const std::map<std::string, std::pair<int, int>> DISPATCH_OFFSETS = {{"x", {4, 12}}, {"y", {6, 16}}, {"z", {8, 20}}};

namespace {

bool has_flag(const ir::Attrs& attrs, std::string_view key) {
  // Python's attrs.get(key): a present flag or a non-zero/non-empty value is truthy.
  auto found = attrs.find(key);
  if (found == attrs.end()) return false;
  const ir::Attr& attr = found->second;
  return attr.kind == ir::Attr::Kind::flag || (attr.kind == ir::Attr::Kind::integer ? attr.integer != 0
                                                                                     : !attr.text.empty());
}

std::string attr_text(const ir::Attr& attr) {
  return attr.kind == ir::Attr::Kind::text ? attr.text : std::to_string(attr.integer);
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
  return out;
}

}  // namespace

std::string processor_gate(const std::string& arch_name, const Flavor& flavor) {
  const auto& processors = flavor.processors;
  if (std::find(processors.begin(), processors.end(), arch_name) != processors.end()) return "";
  return arch_name + " needs flavor " + target::find_arch(arch_name).oldest_flavor + " or newer (got " +
         flavor.name + ")";
}

std::string lower_kernel(const ir::Kernel& kernel, const Flavor& flavor) {
  return lower_module({std::cref(kernel)}, flavor);
}

std::string lower_module(const std::vector<std::reference_wrapper<const ir::Kernel>>& kernels, const Flavor& flavor) {
  std::vector<std::string> names, buffers;
  std::set<std::string> arches;
  for (const ir::Kernel& kernel : kernels) {
    names.push_back(kernel.name);
    for (const auto& buffer : kernel.lds) buffers.push_back(buffer.name);
    arches.insert(kernel.arch);
  }
  std::vector<std::string> all = names;
  all.insert(all.end(), buffers.begin(), buffers.end());
  if (std::set<std::string>(all.begin(), all.end()).size() != all.size())
    throw LowerError("kernel and LDS names must be unique in a module (got " + join(all, ", ") + ")");
  if (arches.size() != 1) throw LowerError("the kernels of a module must share one arch");
  std::vector<Lowering> lowerings;
  lowerings.reserve(kernels.size());
  for (size_t index = 0; index < kernels.size(); ++index)
    lowerings.emplace_back(kernels[index].get(), flavor, static_cast<int>(index));
  std::vector<std::string> functions;
  size_t size = 0;
  for (auto& lowering : lowerings) {
    functions.push_back(lowering.function_lines());
    size += functions.back().size() + 1;
  }
  const ir::Kernel& first = kernels[0].get();
  std::string what = names.size() == 1 ? "kernel " + names[0] : "kernels " + join(names, ", ");
  // Python joins a list of lines; C++ appends each line and its "\n" to one reserved text.
  std::string out;
  out.reserve(size + 1024);
  auto line = [&out](const std::string& text) {
    out += text;
    out += '\n';
  };
  line("; kemit " + what + " for " + first.arch + " at " + flavor.name);
  line("target datalayout = \"" + flavor.datalayout + "\"");
  line("target triple = \"amdgcn-amd-amdhsa\"");
  line("");
  for (const auto& lowering : lowerings)
    for (const auto& text : lowering.lds_lines()) line(text);
  if (!buffers.empty()) line("");
  for (const auto& text : functions) {
    out += text;  // already one "\n"-terminated line after another
    line("");
  }
  std::map<std::string, std::string> declarations;  // sorted by name, as the module prints them
  for (const auto& lowering : lowerings)
    for (const auto& [name, text] : lowering.declared())
      if (declarations.emplace(name, text).first->second != text)
        throw LowerError("kernels of one module declare " + name + " differently");
  for (const auto& entry : declarations) line(entry.second);
  if (!declarations.empty()) line("");
  for (const auto& lowering : lowerings)
    line("attributes #" + std::to_string(lowering.index()) + " = { " + lowering.kernel_attributes() + " }");
  return out;
}

Lowering::Lowering(const ir::Kernel& kernel, const Flavor& flavor, int index)
    : kernel(kernel), flavor(flavor), index_(index) {}

// ---- module ---------------------------------------------------------------------------------
std::vector<std::string> Lowering::lds_lines() const {
  std::vector<std::string> out;
  for (const auto& buffer : kernel.lds)
    out.push_back("@" + buffer.name + " = internal unnamed_addr addrspace(3) global [" +
                  std::to_string(buffer.count) + " x " + llvm_type(buffer.element) + "] poison, align " +
                  std::to_string(buffer.align));
  return out;
}

std::string Lowering::function_lines() {
  std::vector<std::string> param_texts;
  for (const auto& param : kernel.params) param_texts.push_back(param_text(param));
  std::string params = join(param_texts, ", ");
  for (const auto& buffer : kernel.lds) name_slot(buffer.value.id) = "@" + buffer.name;
  lower_region(kernel.body);
  std::string out =
      "define amdgpu_kernel void @" + kernel.name + "(" + params + ") #" + std::to_string(index_) + " {\nentry:\n";
  out.reserve(out.size() + lines.size() + 16);
  out += lines.view();
  out += "  ret void\n}\n";
  return out;
}

std::string Lowering::kernel_attributes() const {
  std::map<std::string, std::string> pairs = {{"target-cpu", kernel.arch}, {"uniform-work-group-size", "true"}};
  for (const auto& [key, value] : kernel.attrs) {
    auto spelled = KERNEL_ATTRIBUTES.find(key);
    if (spelled == KERNEL_ATTRIBUTES.end()) throw LowerError("kernel attribute '" + key + "' has no LLVM spelling");
    pairs[spelled->second] = value;
  }
  std::vector<std::string> words;
  for (const auto& [key, value] : pairs) words.push_back("\"" + key + "\"=\"" + value + "\"");
  return join(words, " ");
}

std::string Lowering::param_text(const ir::Param& param) {
  name_slot(param.value.id) = "%" + param.name;
  std::vector<std::string> words = {llvm_type(param.value.type)};
  const auto& attrs = param.attrs;
  if (has_flag(attrs, "noalias")) words.push_back("noalias");
  if (has_flag(attrs, "nocapture")) words.push_back(flavor.captures_attr ? "captures(none)" : "nocapture");
  for (const char* flag : {"readonly", "writeonly"})
    if (has_flag(attrs, flag)) words.push_back(flag);
  if (attrs.count("align")) words.push_back("align " + attr_text(attrs.at("align")));
  return join(words, " ") + " %" + param.name;
}

// ---- helpers --------------------------------------------------------------------------------
void Lowering::start_block(const std::string& label) {
  lines += label;
  lines += ":\n";
  block = label;
}

std::string Lowering::new_block_prefix(const std::string& kind) {
  std::string prefix = kind + std::to_string(blocks_made);
  blocks_made += 1;
  return prefix;
}

void Lowering::declare(const std::string& name, const std::string& result, const std::vector<std::string>& args) {
  declarations[name] = "declare " + result + " @" + name + "(" + join(args, ", ") + ")";
}

std::string Lowering::call(const std::string& name, const std::string& result_type,
                           const std::vector<std::pair<std::string, std::string>>& args) {
  // Python declares through declare(); C++ spells the same declaration into a kept buffer and
  // stores it only when it is new or differs (most calls repeat an intrinsic already declared).
  std::string& declaration = declaration_scratch;
  declaration = "declare ";
  declaration += result_type;
  declaration += " @";
  declaration += name;
  declaration += '(';
  std::string text;
  text.reserve(64 + name.size() + 24 * args.size());  // one allocation for the whole call
  text += "call ";
  text += result_type;
  text += " @";
  text += name;
  text += '(';
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) {
      text += ", ";
      declaration += ", ";
    }
    declaration += args[i].first;
    text += args[i].first;
    text += ' ';
    text += args[i].second;
  }
  declaration += ')';
  auto found = declarations.find(name);
  if (found == declarations.end())
    declarations.emplace(name, declaration);
  else if (found->second != declaration)
    found->second = declaration;
  text += ')';
  return text;
}

const std::string& Lowering::value(const Value& v) const {
  // Python: self.names[v.id] (a KeyError for a value never defined).
  if (v.id < 0 || static_cast<size_t>(v.id) >= names.size() || names[static_cast<size_t>(v.id)].empty())
    throw std::out_of_range("no LLVM name for value %" + std::to_string(v.id));
  return names[static_cast<size_t>(v.id)];
}

Typed Lowering::typed(const Value& v) const { return Typed{v.type, value(v)}; }

std::string Lowering::define(const Value& v, std::string_view suffix) {
  // Spelled in a stack buffer, then made a string once (most names fit std::string's own bytes).
  char text[64] = {'%', 'v'};
  char* end = std::to_chars(text + 2, text + 24, v.id).ptr;
  size_t size = std::min(suffix.size(), sizeof text - static_cast<size_t>(end - text));
  std::memcpy(end, suffix.data(), size);
  std::string name(text, static_cast<size_t>(end - text) + size);
  if (suffix.size() > size) name.append(suffix.substr(size));
  if (suffix.empty()) name_slot(v.id) = name;
  return name;
}

std::string& Lowering::name_slot(int id) {
  size_t at = static_cast<size_t>(id);
  if (at >= names.size()) names.resize(std::max(at + 1, 2 * names.size()));
  return names[at];
}

// ---- ops --------------------------------------------------------------------------------------
void Lowering::lower_region(const ir::Region& region) {
  for (const auto& op : region.ops) {
    if (op.name == OpKind::yield_values) continue;
    (this->*handler(op.name))(op);
  }
}

Lowering::Handler Lowering::handler(OpKind name) const {
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
    default: break;
  }
  throw LowerError("no lowering for op '" + std::string(tables::op_name(name)) + "'");
}

void Lowering::lower_const(const Op& op) {
  const Value& result = op.results[0];
  name_slot(result.id) = constant_literal(result.type, op.attrs.at("value"), flavor);
}

void Lowering::lower_workitem_id(const Op& op) {
  std::string dim = op.attrs.at("dim").text;
  emit(define(op.results[0]), " = ", call("llvm.amdgcn.workitem.id." + dim, "i32", {}));
}

void Lowering::lower_workgroup_id(const Op& op) {
  std::string dim = op.attrs.at("dim").text;
  emit(define(op.results[0]), " = ", call("llvm.amdgcn.workgroup.id." + dim, "i32", {}));
}

// grid size / workgroup size, both read from the HSA dispatch packet.
void Lowering::lower_num_workgroups(const Op& op) {
  const Value& result = op.results[0];
  auto [size_offset, grid_offset] = DISPATCH_OFFSETS.at(op.attrs.at("dim").text);
  std::string packet = define(result, ".packet");
  emit(packet, " = ", call("llvm.amdgcn.dispatch.ptr", "ptr addrspace(4)", {}));
  const std::tuple<std::string, int, std::string> reads[] = {{"size", size_offset, "i16"},
                                                             {"grid", grid_offset, "i32"}};
  for (const auto& [role, offset, t] : reads) {
    std::string address = define(result, "." + role + ".addr");
    emit(address, " = getelementptr inbounds i8, ptr addrspace(4) ", packet, ", i64 ", offset);
    std::string loaded = define(result, "." + role);
    emit(loaded, " = load ", t, ", ptr addrspace(4) ", address, ", align ", std::stoi(t.substr(1)) / 8);
  }
  std::string size32 = define(result, ".size32");
  emit(size32, " = zext i16 ", define(result, ".size"), " to i32");
  std::string grid = define(result, ".grid");
  emit(define(result), " = udiv i32 ", grid, ", ", size32);
}

void Lowering::lower_int_binary(const Op& op) {
  const Value& a = op.operands[0];
  const Value& b = op.operands[1];
  // Python joins the opcode and its flags; C++ appends the flags to a short text.
  std::string flags;
  if (!op.attrs.empty())  // most int ops carry no flags: no lookups then
    for (const char* flag : {"nuw", "nsw", "disjoint"})
      if (has_flag(op.attrs, flag) && (std::strcmp(flag, "disjoint") != 0 || flavor.or_disjoint)) {
        flags += ' ';
        flags += flag;
      }
  emit(define(op.results[0]), " = ", tables::op_row(op.name).llvm, flags, ' ', typed(a), ", ", value(b));
}

void Lowering::lower_float_op(const Op& op) {
  const Value& result = op.results[0];
  std::string t = llvm_type(result.type);
  std::string text;
  const tables::OpRow& row = tables::op_row(op.name);
  if (!row.llvm_intrinsic) {  // fneg a, or fadd a, b
    text = text_of(row.llvm, ' ', typed(op.operands[0]));
    for (size_t i = 1; i < op.operands.size(); ++i) text += text_of(", ", value(op.operands[i]));
  } else {
    std::string name = text_of(row.llvm, '.', mangle(result.type));
    std::vector<std::pair<std::string, std::string>> args;
    for (const auto& v : op.operands) args.emplace_back(t, value(v));
    text = call(name, t, args);
  }
  emit(define(result), " = ", text);
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
  std::string_view nneg = flavor.zext_nneg && has_flag(op.attrs, "nneg") ? " nneg" : "";
  emit(define(result), " = ", row.llvm, nneg, ' ', typed(source), " to ", result.type);
}

// extractelement / scalar cast / insertelement, for casts a flavor's llc cannot select.
void Lowering::lower_cast_per_lane(const Op& op) {
  const Value& source = op.operands[0];
  const Value& result = op.results[0];
  std::string lane_type = llvm_type(ir::element_type(result.type));
  std::string vector = "poison";
  for (int lane = 0; lane < result.type.count; ++lane) {
    std::string index = std::to_string(lane);
    std::string element = define(result, ".e" + index);
    emit(element, " = extractelement ", typed(source), ", i64 ", index);
    emit(define(result, ".c" + index), " = ", tables::op_row(op.name).llvm, ' ', ir::element_type(source.type), ' ',
         element, " to ", lane_type);
    bool last = lane + 1 == result.type.count;
    std::string inserted = last ? define(result) : define(result, ".i" + index);
    emit(inserted, " = insertelement ", result.type, ' ', vector, ", ", lane_type, ' ', define(result, ".c" + index),
         ", i64 ", index);
    vector = inserted;
  }
}

void Lowering::lower_ptr_add(const Op& op) {
  const Value& pointer = op.operands[0];
  const Value& index = op.operands[1];
  const Value& result = op.results[0];
  ir::Type element = ir::parse_type(op.attrs.at("element").text);
  std::string index_text = text_of(typed(index));
  if (pointer.type.space == ir::AddressSpace::global || pointer.type.space == ir::AddressSpace::constant) {
    std::string wide = define(result, ".idx");
    std::string_view nneg = flavor.zext_nneg ? " nneg" : "";
    emit(wide, " = zext", nneg, ' ', index_text, " to i64");
    index_text = text_of("i64 ", wide);
  }
  std::string_view inbounds = flavor.gep_nuw ? "inbounds nuw" : "inbounds";
  emit(define(result), " = getelementptr ", inbounds, ' ', element, ", ", typed(pointer), ", ", index_text);
}

void Lowering::lower_load(const Op& op) {
  const Value& result = op.results[0];
  emit(define(result), " = load ", result.type, ", ", typed(op.operands[0]), ", align ",
       attr_text(op.attrs.at("align")));
}

void Lowering::lower_store(const Op& op) {
  emit("store ", typed(op.operands[0]), ", ", typed(op.operands[1]), ", align ", attr_text(op.attrs.at("align")));
}

void Lowering::lower_barrier(const Op&) {
  emit("fence syncscope(\"workgroup\") release");
  emit(call("llvm.amdgcn.s.barrier", "void", {}));
  emit("fence syncscope(\"workgroup\") acquire");
}

void Lowering::lower_readfirstlane(const Op& op) {
  std::string name = std::string("llvm.amdgcn.readfirstlane") + (flavor.readfirstlane_mangled ? ".i32" : "");
  emit(define(op.results[0]), " = ", call(name, "i32", {{"i32", value(op.operands[0])}}));
}

// ---- structured control flow ---------------------------------------------------------------------
// Rotated loop: entry guard, body with phis, latch at the end of the body.
void Lowering::lower_for(const Op& op) {
  std::string prefix = new_block_prefix(std::string(tables::op_name(op.name)));
  const Value& lo = op.operands[0];
  const Value& hi = op.operands[1];
  const Value& step = op.operands[2];
  std::vector<Value> inits(op.operands.begin() + 3, op.operands.end());
  const ir::Region& region = op.regions[0];
  const Value& iv = region.args[0];
  std::vector<Value> iters(region.args.begin() + 1, region.args.end());
  std::string body_label = prefix + ".body", exit_label = prefix + ".exit";
  std::string guard = define(iv, ".guard");
  emit(guard, " = icmp slt ", typed(lo), ", ", value(hi));
  emit("br i1 ", guard, ", label %", body_label, ", label %", exit_label);
  std::string preheader = block;
  start_block(body_label);
  const auto& yields = region.ops.back().operands;
  std::string next_iv = define(iv, ".next");
  // (arg, init, back-edge value) per phi; the iv's back edge is its increment.
  std::vector<std::tuple<Value, Value, std::string>> carried = {{iv, lo, next_iv}};
  size_t phi_at = lines.size();
  for (const auto& arg : region.args) define(arg);
  lower_region(region);
  std::string latch = block;
  for (size_t i = 0; i < iters.size() && i < inits.size() && i < yields.size(); ++i)
    carried.emplace_back(iters[i], inits[i], value(yields[i]));
  std::string phis;
  for (const auto& [arg, init, back] : carried)
    phis += text_of("  ", value(arg), " = phi ", arg.type, " [ ", value(init), ", %", preheader, " ], [ ", back, ", %",
                    latch, " ]\n");
  lines.insert(phi_at, phis);
  emit(next_iv, " = add nsw i32 ", value(iv), ", ", value(step));
  std::string again = define(iv, ".again");
  emit(again, " = icmp slt i32 ", next_iv, ", ", value(hi));
  emit("br i1 ", again, ", label %", body_label, ", label %", exit_label);
  start_block(exit_label);
  for (size_t i = 0; i < op.results.size() && i < inits.size() && i < yields.size(); ++i) {
    std::string result = define(op.results[i]);
    emit(result, " = phi ", op.results[i].type, " [ ", value(inits[i]), ", %", preheader, " ], [ ", value(yields[i]),
         ", %", latch, " ]");
  }
}

void Lowering::lower_if(const Op& op) {
  std::string prefix = new_block_prefix(std::string(tables::op_name(op.name)));
  std::vector<std::string> labels = {prefix + ".then"};
  if (op.regions.size() == 2) labels.push_back(prefix + ".else");
  std::string end = prefix + ".end";
  std::string otherwise = labels.size() == 2 ? labels[1] : end;
  emit("br ", typed(op.operands[0]), ", label %", labels[0], ", label %", otherwise);
  for (size_t i = 0; i < labels.size() && i < op.regions.size(); ++i) {
    start_block(labels[i]);
    lower_region(op.regions[i]);
    emit("br label %", end);
  }
  start_block(end);
}

}  // namespace kemit::llvm
