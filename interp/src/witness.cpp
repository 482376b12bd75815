// A witness run at real size (interp.h, docs/numerics.md "Witness runs at real size"): the launch's
// buffers exist only as the pages the run touches, each pointer param is a view of one, and the
// chosen workgroups run one after another, each reported as ok or its first failure. A failure
// ends that workgroup only: the next one runs over the memory as the failed one left it.
#include <chrono>
#include <set>

#include "kemit/interp/interp.h"
#include "program.h"
#include "wave.h"
#include "workgroup.h"

namespace kemit::interp {
namespace {

std::vector<witness::PagedBuffer> make_buffers(const witness::Launch& launch) {
  std::vector<witness::PagedBuffer> buffers;
  buffers.reserve(launch.buffers.size());  // regions keep pointers to them
  for (const auto& spec : launch.buffers) {
    witness::Fill fill = witness::Fill::f32;
    witness::fill_of(spec.fill, fill);  // check_launch refused an unknown fill
    buffers.emplace_back(spec.name, spec.bytes, fill, launch.seed, launch.page_bytes);
  }
  return buffers;
}

// A pointer param's region: its view's bytes of the paged buffer the view names.
Region view_region(const Program& program, const witness::Launch& launch, std::vector<witness::PagedBuffer>& buffers,
                   const ParamInfo& param) {
  auto found = launch.views.find(param.name);
  if (found == launch.views.end())
    throw InterpError("witness launch: kernel @" + program.kernel + ": no view for pointer param '" + param.name + "'");
  const witness::ViewSpec& view = found->second;
  for (auto& buffer : buffers)
    if (buffer.name() == view.buffer) {
      Region region{param.name, nullptr, view.bytes, true, false, nullptr};
      region.paged = &buffer;
      region.base = view.offset;
      return region;
    }
  throw InterpError("witness launch: param '" + param.name + "' views buffer '" + view.buffer + "', which the launch does not declare");
}

witness::WorkgroupRun failed_run(const witness::Dims& group, const InterpError& error) {
  witness::WorkgroupRun run;
  run.workgroup = group;
  run.ok = false;
  run.error = error.what();
  if (auto* at_op = dynamic_cast<const OpError*>(&error)) {
    run.op = at_op->op;
    run.workitem = at_op->workitem;
    run.message = at_op->message;
  } else {
    run.message = error.what();
  }
  return run;
}

}  // namespace

WitnessReport run_witness(const ir::Kernel& kernel, const witness::Launch& launch) {
  auto start = std::chrono::steady_clock::now();
  std::string problem = witness::check_launch(launch);
  if (!problem.empty()) throw InterpError(problem);
  Program program = compile(kernel);
  WitnessReport report;
  report.buffers = make_buffers(launch);
  Memory memory;
  memory.regions.resize(1 + program.params.size() + program.lds.size());
  std::set<std::string> pointers;
  for (const auto& [param, view] : launch.views) pointers.insert(param);
  auto region_of = [&](const ParamInfo& param) { return view_region(program, launch, report.buffers, param); };
  std::vector<uint64_t> params = param_values(program, pointers, region_of, launch.scalars, memory);
  std::array<int64_t, 3> grid, group;
  std::array<int, 3> block;
  for (int d = 0; d < 3; ++d) grid[d] = int64_t(launch.grid[d]), block[d] = int(launch.block[d]);
  GroupState state(program);
  for (const witness::Dims& chosen : witness::chosen_workgroups(launch)) {
    for (int d = 0; d < 3; ++d) group[d] = int64_t(chosen[d]);
    try {
      run_workgroup(program, memory, report.stats, grid, block, group, params, state);
      witness::WorkgroupRun run;
      run.workgroup = chosen;
      report.runs.push_back(run);
    } catch (const InterpError& error) {
      report.runs.push_back(failed_run(chosen, error));
      state.storage.clear();  // waves stopped mid-run leave their stacks: the next workgroup gets fresh ones
    }
    report.stats.workgroups += 1;
  }
  report.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace kemit::interp
