#include "kemit/proof/witness_launch.h"

#include <nlohmann/json.hpp>

namespace kemit::proof {
namespace {

using nlohmann::json;

constexpr Int kMaxU64 = (Int(1) << 64) - 1;

[[noreturn]] void refuse(const Launch& line, const std::string& why) {
  throw WitnessLaunchError("witness launch of plan line " + std::to_string(line.line) + " (" + line.kernel + "): " + why);
}

// The names a launch line's expressions read: every size, and each chunk level's first and count.
std::map<std::string, Int> names_of(const Plan& plan, const Launch& line, const LaunchPoint& point) {
  std::map<std::string, Int> names;
  for (const SizeRange& size : plan.sizes) {
    auto found = point.sizes.find(size.name);
    if (found == point.sizes.end()) refuse(line, "no value for size '" + size.name + "'");
    names[size.name] = found->second;
  }
  if (line.chunks.size() != point.chunks.size())
    refuse(line, line.chunks.empty() ? "the line is not chunked"
                                     : "a chunked line needs the chunk's first and count at each of its " +
                                           std::to_string(line.chunks.size()) + " levels");
  for (size_t depth = 0; depth < line.chunks.size(); ++depth) {
    names[line.chunks[depth].first] = point.chunks[depth].first;
    names[line.chunks[depth].count] = point.chunks[depth].second;
  }
  return names;
}

Int evaluate(const Launch& line, const Expr& e, const std::map<std::string, Int>& names, const std::string& what) {
  try {
    return eval_expr(e, names);
  } catch (const PlanError& error) {
    refuse(line, what + " '" + expr_text(e) + "': " + error.what());
  }
}

uint64_t unsigned_of(const Launch& line, Int value, const std::string& what) {
  if (value < 0 || value > kMaxU64) refuse(line, what + " = " + int_text(value) + " is not an unsigned 64-bit count");
  return uint64_t(value);
}

void bind_arg(const Launch& line, const Binding& binding, const std::map<std::string, Int>& names, witness::Launch& out) {
  if (binding.kind == Binding::Kind::scalar) {
    Int value = evaluate(line, binding.value, names, "scalar " + binding.param);
    if (value < INT64_MIN || value > INT64_MAX) refuse(line, "scalar " + binding.param + " = " + int_text(value) + " passes 64 bits");
    out.scalars[binding.param] = int64_t(value);
    return;
  }
  witness::ViewSpec view{binding.buffer, 0, 0};
  for (const witness::BufferSpec& buffer : out.buffers)
    if (buffer.name == binding.buffer) view.bytes = buffer.bytes;
  if (binding.kind == Binding::Kind::view) {
    view.offset = unsigned_of(line, evaluate(line, binding.offset, names, "view offset of " + binding.param), "view offset of " + binding.param);
    view.bytes = unsigned_of(line, evaluate(line, binding.bytes, names, "view bytes of " + binding.param), "view bytes of " + binding.param);
  }
  out.views[binding.param] = view;
}

witness::Dims dims_of(const json& value) {
  witness::Dims dims = {0, 0, 0};
  for (size_t d = 0; d < 3 && d < value.size(); ++d) dims[d] = value.at(d).get<uint64_t>();
  return dims;
}

// The last chunk of `total` by `by`: first the last multiple of `by` below total, count the rest.
std::pair<Int, Int> last_chunk(Int total, Int by) {
  Int first = (total - 1) / by * by;
  return {first, total - first};
}

bool buffers_fit(const Plan& plan, const std::map<std::string, Int>& sizes) {
  for (const BufferDecl& buffer : plan.buffers)
    if (eval_expr(buffer.bytes, sizes) > Int(witness::kMaxBufferBytes)) return false;
  return true;
}

// The largest value of `size` in its range whose buffers all fit a witness run (2^40 bytes each),
// the other sizes as in `sizes`; the range's bottom when none does (the run then says why).
Int largest_fitting(const Plan& plan, std::map<std::string, Int> sizes, const SizeRange& size) {
  Int lo = size.lo, hi = size.hi;
  while (lo < hi) {  // buffer bytes never fall as a size grows: the fitting values are a prefix
    Int middle = lo + (hi - lo + 1) / 2;
    sizes[size.name] = middle;
    if (buffers_fit(plan, sizes)) lo = middle;
    else hi = middle - 1;
  }
  return lo;
}

}  // namespace

// Per size, the sizes at which it is largest: it at the top of its range (or as far as every buffer
// stays within 2^40 bytes, the largest a witness run takes: the ranges are a box, one device's
// tensors are not), every other size at its smallest positive value. One set when no size is declared.
std::vector<std::map<std::string, Int>> extreme_sizes(const Plan& plan) {
  std::map<std::string, Int> base;
  for (const SizeRange& size : plan.sizes) base[size.name] = size.lo > 0 || size.hi < 1 ? size.lo : Int(1);
  std::vector<std::map<std::string, Int>> extremes;
  if (plan.sizes.empty()) extremes.push_back(base);
  for (const SizeRange& size : plan.sizes) {
    std::map<std::string, Int> sizes = base;
    sizes[size.name] = largest_fitting(plan, base, size);
    bool seen = false;
    for (const auto& each : extremes) seen = seen || each == sizes;
    if (!seen) extremes.push_back(sizes);
  }
  return extremes;
}

witness::Launch launch_at(const Plan& plan, const LaunchPoint& point, uint64_t seed) {
  if (point.launch < 0 || size_t(point.launch) >= plan.launches.size())
    throw WitnessLaunchError("witness launch: the plan has no launch " + std::to_string(point.launch));
  const Launch& line = plan.launches[point.launch];
  std::map<std::string, Int> names = names_of(plan, line, point);
  witness::Launch out;
  out.kernel = line.kernel;
  out.seed = seed;
  out.block = {uint64_t(line.block), 1, 1};
  for (int d = 0; d < 3; ++d)
    out.grid[d] = line.grid[d].is_range ? point.grid[d]
                                        : unsigned_of(line, evaluate(line, line.grid[d].lo, names, "grid"), "grid");
  for (const BufferDecl& buffer : plan.buffers)
    out.buffers.push_back({buffer.name, unsigned_of(line, evaluate(line, buffer.bytes, names, "buffer " + buffer.name),
                                                    "buffer " + buffer.name),
                           "f32"});
  for (const Binding& binding : line.args) bind_arg(line, binding, names, out);
  out.workgroups = point.workgroups;
  return out;
}

LaunchPoint witness_point(const std::string& witness_json) {
  json w = json::parse(witness_json, nullptr, false);
  if (!w.is_object() || !w.contains("launch") || !w.contains("grid") || !w.contains("workgroup"))
    throw WitnessLaunchError("witness launch: not a prover's witness (launch, sizes, grid, workgroup): " + witness_json);
  LaunchPoint point;
  try {
    point.launch = w.at("launch").get<int>();
    const json sizes = w.value("sizes", json::object());  // held: items() refers into it
    for (const auto& [name, value] : sizes.items()) point.sizes[name] = value.get<int64_t>();
    for (int depth = 0; depth < MAX_CHUNK_LEVELS && w.contains(chunk_key(depth)); ++depth) {
      const json& chunk = w[chunk_key(depth)];
      point.chunks.push_back({chunk.at("first").get<int64_t>(), chunk.at("count").get<int64_t>()});
    }
    point.grid = dims_of(w.at("grid"));
    point.workgroups = {dims_of(w.at("workgroup"))};
  } catch (const json::exception& error) {
    throw WitnessLaunchError("witness launch: a malformed witness (" + std::string(error.what()) + "): " + witness_json);
  }
  return point;
}

std::vector<LaunchPoint> largest_points(const Plan& plan) {
  std::vector<LaunchPoint> points;
  for (const auto& sizes : extreme_sizes(plan))
    for (size_t i = 0; i < plan.launches.size(); ++i) {
      const Launch& line = plan.launches[i];
      LaunchPoint point;
      point.launch = int(i);
      point.sizes = sizes;
      std::map<std::string, Int> names = sizes;
      bool runs = true;
      for (const ChunkLevel& level : line.chunks) {
        Int total = sizes.at(level.size), by = evaluate(line, level.by, names, "chunk");
        if (total <= 0 || by <= 0) runs = false;
        if (!runs) break;
        point.chunks.push_back(last_chunk(total, by));
        names[level.first] = point.chunks.back().first, names[level.count] = point.chunks.back().second;
      }
      if (!runs) continue;
      for (int d = 0; d < 3; ++d)
        point.grid[d] = unsigned_of(line, evaluate(line, line.grid[d].hi, names, "grid"), "grid");
      points.push_back(point);
    }
  return points;
}

std::string launch_json(const witness::Launch& launch) {
  auto dims = [](const witness::Dims& d) { return json::array({d[0], d[1], d[2]}); };
  json buffers = json::object(), args = json::object(), groups = json::array();
  for (const auto& buffer : launch.buffers) buffers[buffer.name] = {{"bytes", buffer.bytes}, {"fill", buffer.fill}};
  for (const auto& [param, view] : launch.views)
    args[param] = {{"buffer", view.buffer}, {"offset", view.offset}, {"bytes", view.bytes}};
  for (const auto& [param, value] : launch.scalars) args[param] = value;
  for (const auto& group : launch.workgroups) groups.push_back(dims(group));
  json out = {{"kernel", launch.kernel}, {"grid", dims(launch.grid)}, {"block", dims(launch.block)},
              {"seed", launch.seed},     {"page_bytes", launch.page_bytes}, {"buffers", buffers},
              {"args", args}};
  if (!groups.empty()) out["workgroups"] = groups;
  return out.dump();
}

}  // namespace kemit::proof
