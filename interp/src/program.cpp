// Compiling a kernel for interpretation (see program.h).
#include "program.h"

#include <algorithm>
#include <map>

#include "kemit/interp/interp.h"
#include "kemit/ir/printer.h"
#include "kemit/target/arch.h"
#include "mma_layout.h"

namespace kemit::interp {
namespace {

// Pred of a predicate name: its place among the icmp predicates, then the fcmp ones (tables/ops.json).
int64_t predicate_of(const std::string& name) {
  int64_t index = 0;
  for (auto kind : {tables::OpKind::icmp, tables::OpKind::fcmp})
    for (auto pred : tables::op_row(kind).predicates) {
      if (pred == name) return index;
      ++index;
    }
  throw std::out_of_range("unknown predicate '" + name + "'");
}

// Positions in the order the executor runs a kernel's ops: one per op (a for's first, before its
// body), and one more at the end of each for, where its iterations end (hi and step are read
// again, the yields read, the results written). The Compiler counts them the same way.
//
// A value's death is the last position that reads it; a read inside a loop that the value was made
// before reads it on every iteration, so it counts at the loop's end. After its death a value's
// slots may hold another's: every value is written (for the lanes that later read it) before it
// is read, so a slot's earlier contents never show.
struct Lifetimes {
  std::vector<int> born, death;  // by value id: positions (0: not made by an op, a param or LDS array)
  struct Loop {
    int start, end;
  };
  std::vector<Loop> loops;
  std::vector<int> open;  // the loops around the current position, outermost first
  // A read at `at`, or (loop >= 0) on every trip of that loop, which counts at its end.
  struct Read {
    int id, at, loop;
  };
  std::vector<Read> reads;
  int position = 0;

  void make(int id, int at) {
    if (static_cast<size_t>(id) >= born.size()) born.resize(static_cast<size_t>(id) + 1, 0);
    born[static_cast<size_t>(id)] = at;
  }
  void read(int id, int at) {
    const int made = static_cast<size_t>(id) < born.size() ? born[static_cast<size_t>(id)] : 0;
    if (made == 0) return;  // alive throughout
    int loop = -1;  // the outermost loop around `at` that the value was made before
    for (int index : open)
      if (made < loops[static_cast<size_t>(index)].start) {
        loop = index;
        break;
      }
    reads.push_back({id, at, loop});
  }

  void region(const ir::Region& region) {
    for (const auto& op : region.ops) {
      if (op.name == Code::yield_values) continue;  // read at its for's end
      const int at = ++position;
      if (op.name != Code::for_loop) {
        for (const auto& v : op.operands) read(v.id, at);
        for (const auto& v : op.results) make(v.id, at);
        for (const auto& sub : op.regions) this->region(sub);  // if: then, else
        continue;
      }
      const ir::Region& body = op.regions.at(0);
      const int loop = static_cast<int>(loops.size());
      loops.push_back({at, 0});
      for (size_t i = 0; i < op.operands.size(); ++i) read(op.operands[i].id, at);  // lo, hi, step, inits
      open.push_back(loop);
      for (const auto& v : body.args) make(v.id, at);
      this->region(body);
      const int end = ++position;
      loops[static_cast<size_t>(loop)].end = end;
      // hi and step are read on every trip; the yields and (for the results) the iters at the end.
      for (size_t i = 1; i < 3 && i < op.operands.size(); ++i) read(op.operands[i].id, end);
      if (!body.ops.empty() && body.ops.back().name == Code::yield_values)
        for (const auto& v : body.ops.back().operands) read(v.id, end);
      for (const auto& v : body.args) read(v.id, end);
      open.pop_back();
      for (const auto& v : op.results) make(v.id, end);
    }
  }

  // Each value's death; a value no op reads dies where it is born.
  void finish() {
    death = born;
    for (const auto& r : reads) {
      const int last = r.loop >= 0 ? loops[static_cast<size_t>(r.loop)].end : r.at;
      int& at = death[static_cast<size_t>(r.id)];
      at = std::max(at, last);
    }
  }
};

struct Compiler {
  std::map<int, Operand> values;  // value id -> its slots
  int slots = 0;
  Lifetimes lifetimes;
  int position = 0;  // as Lifetimes counts
  std::map<int, std::vector<int>> dying;  // death position -> the values that die there
  std::map<int, std::vector<int>> unused;  // width -> first slots of dead values of that width

  Operand allocate(const ir::Value& v) {
    Operand operand{slots, ir::lanes(v.type), scalar_of(v.type)};
    auto& reusable = unused[operand.width];
    if (reusable.empty()) {
      slots += operand.width;
    } else {
      operand.slot = reusable.back();
      reusable.pop_back();
    }
    values[v.id] = operand;
    const auto id = static_cast<size_t>(v.id);
    if (id < lifetimes.death.size() && lifetimes.death[id] > 0) dying[lifetimes.death[id]].push_back(v.id);
    return operand;
  }

  // The op at the next position starts: the slots of every value dead before it are free. (A
  // value read by this op is not: an op may write part of its result before it reads all of its
  // operands.)
  int next_position() {
    const int at = ++position;
    while (!dying.empty() && dying.begin()->first < at) {
      for (int id : dying.begin()->second) unused[values[id].width].push_back(values[id].slot);
      dying.erase(dying.begin());
    }
    return at;
  }

  Operand find(const ir::Op& op, const ir::Value& v) const {
    auto at = values.find(v.id);
    if (at == values.end()) throw InterpError(op_label(op) + ": operand %" + std::to_string(v.id) + " has no value");
    return at->second;
  }

  const ir::Attr& attr(const ir::Op& op, const std::string& key) const {
    auto at = op.attrs.find(key);
    if (at == op.attrs.end()) throw InterpError(op_label(op) + ": the interpreter needs attribute " + key);
    return at->second;
  }

  Block block(const ir::Region& region) {
    Block out;
    for (const auto& op : region.ops)
      if (op.name != Code::yield_values) {
        next_position();
        out.push_back(instr(op));
      }
    return out;
  }

  Instr instr(const ir::Op& op);
  void immediates(const ir::Op& op, Instr& in);
};

Instr Compiler::instr(const ir::Op& op) {
  Instr in;
  in.code = op.name;
  in.op = &op;
  for (const auto& operand : op.operands) in.in.push_back(find(op, operand));
  if (in.code == Code::for_loop) {
    const ir::Region& body = op.regions.at(0);
    for (const auto& arg : body.args) in.args.push_back(allocate(arg));
    in.bodies.push_back(block(body));
    if (body.ops.empty() || body.ops.back().name != Code::yield_values)
      throw InterpError(op_label(op) + ": a for body must end with a yield");
    for (const auto& v : body.ops.back().operands) in.yields.push_back(find(op, v));
    next_position();  // the loop's end
    for (const auto& result : op.results) in.results.push_back(allocate(result));
    return in;
  }
  if (in.code == Code::if_then) {
    for (const auto& region : op.regions) in.bodies.push_back(block(region));
    return in;
  }
  if (!op.results.empty()) in.result = allocate(op.results[0]);
  immediates(op, in);
  return in;
}

void Compiler::immediates(const ir::Op& op, Instr& in) {
  in.nsw = op.attrs.count("nsw") > 0;
  in.nuw = op.attrs.count("nuw") > 0;
  in.flag = op.attrs.count("disjoint") > 0 || op.attrs.count("nneg") > 0;
  switch (in.code) {
    case Code::constant: {
      const ir::Attr& value = attr(op, "value");
      uint64_t bits = value.kind == ir::Attr::Kind::integer ? static_cast<uint64_t>(value.integer) & width_mask(in.result.kind)
                                                             : std::stoull(value.text.substr(2), nullptr, 16);
      in.data.assign(in.result.width, bits);
      break;
    }
    case Code::workitem_id: case Code::workgroup_id: case Code::num_workgroups:
      in.imm = attr(op, "dim").text[0] - 'x';
      break;
    case Code::icmp: case Code::fcmp:
      in.imm = predicate_of(attr(op, "pred").text);
      break;
    case Code::ptr_add:
      in.imm = ir::byte_size(ir::parse_type(attr(op, "element").text));
      break;
    case Code::load: case Code::store:
      in.imm = attr(op, "align").integer;
      break;
    case Code::atomic_add:
      // Monotonic is the one order the IR accepts (tables/ops.json): lanes, waves and workgroups
      // in any order give the same final memory, and nothing else is ordered by it.
      if (attr(op, "order").text != "monotonic")
        throw InterpError(op_label(op) + ": the interpreter runs order monotonic only");
      in.imm = attr(op, "align").integer;
      in.flag = attr(op, "scope").text == "workgroup";
      break;
    case Code::extract_element: case Code::insert_element:
      in.imm = attr(op, "index").integer;
      break;
    case Code::update_dpp:
      in.imm = attr(op, "ctrl").integer;
      break;
    case Code::shuffle: {
      const std::string& mask = attr(op, "mask").text;
      size_t start = 1;
      while (start < mask.size()) {
        size_t end = mask.find_first_of(",]", start);
        in.data.push_back(std::stoull(mask.substr(start, end - start)));
        start = end + 1;
      }
      break;
    }
    case Code::mma:
      in.mma = find_mma_layout(attr(op, "instr").text);
      if (in.mma < 0) throw InterpError(op_label(op) + ": the interpreter has no layout for mma instruction '" +
                                        attr(op, "instr").text + "'");
      break;
    default:
      break;
  }
}

}  // namespace

std::string op_label(const ir::Op& op) {
  if (op.name == Code::for_loop || op.name == Code::if_then) {
    ir::TextBuffer printed;  // the op with its regions; its label is the head line without " {"
    if (op.name == Code::for_loop) ir::print_for(op, 0, printed);
    else ir::print_if(op, 0, printed);
    std::string text = printed.str();
    std::string head = text.substr(0, text.find('\n'));
    return head.size() < 2 ? std::string(tables::op_name(op.name)) : head.substr(0, head.size() - 2);
  }
  return ir::op_text(op);
}

Program compile(const ir::Kernel& kernel) {
  Program program;
  program.kernel = kernel.name;
  try {
    program.wave_size = target::find_arch(kernel.arch).wave_size;
  } catch (const target::UnknownArch& error) {
    throw InterpError(std::string("kernel @") + kernel.name + ": " + error.what());
  }
  Compiler compiler;
  int region = 1;  // 0 is no region (a null pointer)
  for (const auto& param : kernel.params) {
    ParamInfo info{param.name, compiler.allocate(param.value), param.value.type.kind == ir::TypeKind::pointer,
                   param.attrs.count("readonly") > 0, 0};
    if (info.pointer) info.region = region++;
    program.params.push_back(info);
  }
  for (const auto& buffer : kernel.lds)
    program.lds.push_back({buffer.name, compiler.allocate(buffer.value),
                           static_cast<size_t>(buffer.count) * ir::byte_size(buffer.element), region++});
  compiler.lifetimes.region(kernel.body);
  compiler.lifetimes.finish();
  program.body = compiler.block(kernel.body);
  program.slots = compiler.slots;
  return program;
}

}  // namespace kemit::interp
