// Launch plans. Mirrors py_engine/kemit/plan.py (docs in the header).
#include "kemit/plan.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "kemit/ir/types.h"

namespace kemit::plan {

const char* const HEADER = "; kemit launch plan 2\n";
const Expr FIRST = name("first");
const Expr COUNT = name("count");
const Expr FIRST2 = name("first2");
const Expr COUNT2 = name("count2");

namespace {

int precedence(const std::string& op) {
  if (op == "+" || op == "-") return 1;
  if (op == "*" || op == "/") return 2;
  return 3;
}

bool chains(const std::string& op) { return op == "+" || op == "*"; }

Expr binary(const std::string& op, const Expr& a, const Expr& b) { return Expr(op, 0, "", {a, b}); }

}  // namespace

Expr operator+(const Expr& a, const Expr& b) { return binary("+", a, b); }
Expr operator-(const Expr& a, const Expr& b) { return binary("-", a, b); }
Expr operator*(const Expr& a, const Expr& b) { return binary("*", a, b); }
Expr operator/(const Expr& a, const Expr& b) { return binary("/", a, b); }

Expr expr(const Expr& value) { return value; }

Expr name(const std::string& text) { return Expr("name", 0, text, {}); }

Expr scaled(const Expr& e, int64_t factor) { return factor == 1 ? e : e * factor; }

Expr ceil_div(const Expr& a, const Expr& b) { return binary("ceil", a, b); }

Expr min_of(const Expr& a, const Expr& b) { return binary("min", a, b); }

Expr max_of(const Expr& a, const Expr& b) { return binary("max", a, b); }

std::string expr_text(const Expr& e) {
  if (e.op == "int") return std::to_string(e.value);
  if (e.op == "name") return e.name;
  if (precedence(e.op) < 3) return operand_text(e.args[0], e.op, false) + e.op + operand_text(e.args[1], e.op, true);
  return e.op + "(" + expr_text(e.args[0]) + "," + expr_text(e.args[1]) + ")";
}

std::string operand_text(const Expr& e, const std::string& parent, bool is_right) {
  int mine = e.op == "int" || e.op == "name" ? 3 : precedence(e.op), theirs = precedence(parent);
  bool looser = mine < theirs || (is_right && mine == theirs && !(e.op == parent && chains(parent)));
  return looser ? "(" + expr_text(e) + ")" : expr_text(e);
}

std::string range_text(uint64_t buffer_range) {
  int power = 63 - __builtin_clzll(buffer_range);
  if (buffer_range == uint64_t{1} << power) return "2^" + std::to_string(power) + "-byte";
  return std::to_string(buffer_range) + "-byte";
}

int64_t kernel_block(const ir::Kernel& kernel) {
  for (const auto& [key, value] : kernel.attrs)
    if (key == "flat_work_group_size") return std::stoll(value.substr(value.find(',') + 1));
  throw std::logic_error("kernel " + kernel.name + " has no flat_work_group_size: its plan has no block");
}

int64_t kernel_lds_bytes(const ir::Kernel& kernel) {
  int64_t bytes = 0;
  for (const auto& buffer : kernel.lds) bytes += int64_t{ir::byte_size(buffer.element)} * buffer.count;
  return bytes;
}

std::array<Dim, 3> fixed_grid(const Expr& x, const Expr& y, const Expr& z) {
  return {Dim{x, std::nullopt}, Dim{y, std::nullopt}, Dim{z, std::nullopt}};
}

std::array<Dim, 3> chosen_grid(const Expr& hi) { return {Dim{1, hi}, Dim{1, std::nullopt}, Dim{1, std::nullopt}}; }

Binding whole(const std::string& param) { return {param, "buffer", param, std::nullopt, std::nullopt, std::nullopt}; }

Binding view(const std::string& param, const Expr& offset, const Expr& size) {
  return {param, "buffer", param, std::nullopt, offset, size};
}

Binding scalar(const std::string& param, const Expr& value) {
  return {param, "scalar", "", value, std::nullopt, std::nullopt};
}

Launch kernel_launch(const ir::Kernel& kernel, const std::array<Dim, 3>& grid, const std::vector<Binding>& bindings,
                     const std::optional<Chunks>& chunks, const std::optional<Chunks>& inner) {
  return {kernel.name, grid, kernel_block(kernel), kernel_lds_bytes(kernel), bindings, chunks, inner};
}

int64_t chunk_length(const std::vector<int64_t>& unit_bytes, uint64_t buffer_range, int64_t align) {
  int64_t step = 1;
  for (int64_t unit : unit_bytes) {
    int64_t need = align / gcd(unit, align);
    step = step * need / gcd(step, need);
  }
  int64_t units = static_cast<int64_t>(buffer_range / 2) / *std::max_element(unit_bytes.begin(), unit_bytes.end());
  return units - units % step;
}

int64_t gcd(int64_t a, int64_t b) {
  while (b) {
    int64_t rest = a % b;
    a = b;
    b = rest;
  }
  return a;
}

int64_t lcm(int64_t a, int64_t b) { return a * b / gcd(a, b); }

std::string no_chunk_reason(const std::string& what, int64_t unit_bytes, uint64_t buffer_range) {
  return fmt::format("one {what} ({bytes} bytes) does not fit half the {range} range of 32-bit buffer offsets",
                     fmt::arg("what", what), fmt::arg("bytes", unit_bytes),
                     fmt::arg("range", range_text(buffer_range)));
}

Binding batch_view(const std::string& param, int64_t unit_bytes) {
  return view(param, FIRST * unit_bytes, COUNT * unit_bytes);
}

int64_t tensor_units(int64_t unit_bytes) { return MAX_TENSOR_BYTES / unit_bytes; }

Planned planned(const std::vector<ir::Kernel>& kernels, const std::vector<Size>& sizes,
                const std::map<std::string, Expr>& buffer_bytes, const std::vector<Launch>& launches) {
  Planned plan{"", kernels, sizes, {}, launches};
  std::vector<std::string> order;
  for (const auto& launch : launches)
    for (const auto& b : launch.bindings)
      if (b.kind == "buffer" && std::find(order.begin(), order.end(), b.name) == order.end()) order.push_back(b.name);
  for (const auto& buffer : order) plan.buffers.push_back({buffer, buffer_bytes.at(buffer)});
  return plan;
}

Planned batch_plan(const std::vector<ir::Kernel>& kernels, const std::vector<BatchLaunch>& launched,
                   const std::string& size, const std::vector<std::pair<std::string, int64_t>>& unit_bytes,
                   const std::vector<std::pair<std::string, int64_t>>& whole_bytes, uint64_t buffer_range,
                   int64_t max_grid_lanes, const std::string& what) {
  std::vector<int64_t> units;
  for (const auto& [buffer, unit] : unit_bytes) units.push_back(unit);
  int64_t chunk = chunk_length(units, buffer_range);
  int64_t widest = *std::max_element(units.begin(), units.end());
  if (chunk == 0) return Planned{no_chunk_reason(what, widest, buffer_range), {}, {}, {}, {}};
  std::vector<Launch> launches;
  for (const auto& [kernel, per_group, grid_y] : launched) {
    std::vector<Binding> bindings;
    for (const auto& p : kernel->params) bindings.push_back(batch_binding(p.name, size, unit_bytes));
    Expr top = grid_top(chunk, per_group, kernel_block(*kernel), max_grid_lanes);
    std::array<Dim, 3> grid = {Dim{1, top}, Dim{grid_y, std::nullopt}, Dim{1, std::nullopt}};
    launches.push_back(kernel_launch(*kernel, grid, bindings, Chunks{size, chunk}));
  }
  std::map<std::string, Expr> buffers;
  for (const auto& [buffer, bytes] : whole_bytes) buffers.insert_or_assign(buffer, Expr(bytes));
  for (const auto& [buffer, unit] : unit_bytes) buffers.insert_or_assign(buffer, name(size) * unit);
  return planned(kernels, {Size{size, 0, tensor_units(widest)}}, buffers, launches);
}

Expr grid_top(int64_t chunk, int64_t per_group, int64_t block, int64_t max_grid_lanes) {
  Expr top = per_group == 1 ? COUNT : ceil_div(COUNT, per_group);
  int64_t most_groups = (chunk + per_group - 1) / per_group;
  if (most_groups * block <= max_grid_lanes) return top;
  return min_of(top, max_grid_lanes / block);
}

Binding batch_binding(const std::string& param, const std::string& size,
                      const std::vector<std::pair<std::string, int64_t>>& unit_bytes) {
  if (param == size) return scalar(param, COUNT);
  for (const auto& [buffer, unit] : unit_bytes)
    if (buffer == param) return batch_view(param, unit);
  return whole(param);
}

std::string binding_text(const Binding& binding) {
  if (binding.kind == "scalar") return binding.param + "=scalar:" + expr_text(*binding.value);
  std::string text = binding.param + "=buffer:" + binding.name;
  if (!binding.offset) return text;
  return text + "@" + view_part(*binding.offset) + "+" + view_part(*binding.size);
}

std::string view_part(const Expr& e) { return e.op == "+" || e.op == "-" ? "(" + expr_text(e) + ")" : expr_text(e); }

std::string dim_text(const Dim& dim) {
  return dim.hi ? expr_text(dim.lo) + ".." + expr_text(*dim.hi) : expr_text(dim.lo);
}

std::string chunks_text(const std::optional<Chunks>& chunks) {
  return chunks ? "chunks " + chunks->size + " by " + expr_text(chunks->by) + " " : "";
}

std::string launch_text(const Launch& launch) {
  std::string chunks = chunks_text(launch.chunks) + chunks_text(launch.inner);
  std::string grid = dim_text(launch.grid[0]) + "," + dim_text(launch.grid[1]) + "," + dim_text(launch.grid[2]);
  std::string args;
  for (const auto& b : launch.bindings) args += " " + binding_text(b);
  return "launch " + launch.kernel + " " + chunks + "grid " + grid + " block " + std::to_string(launch.block) +
         " lds " + std::to_string(launch.lds) + " args" + args + "\n";
}

std::string print_plan(const Planned& plan) {
  std::string text = HEADER;
  for (const auto& s : plan.sizes)
    text += "size " + s.name + " " + std::to_string(s.lo) + ".." + std::to_string(s.hi) + "\n";
  for (const auto& b : plan.buffers) text += "buffer " + b.name + " " + expr_text(b.bytes) + "\n";
  for (const auto& launch : plan.launches) text += launch_text(launch);
  return text;
}

}  // namespace kemit::plan
