// kemit::exec::prepare_kernel, execute and execute_witness (executor.h): decode, load the layout
// tables, run.
#include "executor.h"

#include <chrono>

#include "machine.h"
#include "program.h"

namespace kemit::exec {
namespace {

// The kernel decoded and its matrix layout tables loaded; false with `error` set when it cannot run.
bool prepare(llvm::Module& module, const std::string& kernel, const std::string& layout_dir, Program& program,
             std::vector<MatrixLayout>& layouts, std::string& error) {
  if (!decode_kernel(module, kernel, program, error)) return false;
  for (const MmaOp& mma : program.mma_ops) {
    const MmaTable* table = load_mma_table(layout_dir, mma.table, error);
    if (!table) return false;
    layouts.emplace_back();
    if (!matrix_layout(*table, mma, layouts.back(), error)) return false;
  }
  return true;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

struct Kernel {
  Program program;
  std::vector<MatrixLayout> layouts;  // by Op::mma
};

KernelPtr prepare_kernel(llvm::Module& module, const std::string& kernel, const std::string& layout_dir,
                         std::string& error, double& seconds) {
  auto start = std::chrono::steady_clock::now();
  auto prepared = std::make_shared<Kernel>();
  bool ok = prepare(module, kernel, layout_dir, prepared->program, prepared->layouts, error);
  seconds = seconds_since(start);
  return ok ? prepared : nullptr;
}

std::string fingerprint(const Kernel& kernel) { return fingerprint(kernel.program); }

Outcome execute(const Kernel& kernel, Launch& launch) {
  Outcome outcome;
  auto start = std::chrono::steady_clock::now();
  for (int d = 0; d < 3; ++d)
    if (launch.grid[d] < 1 || launch.block[d] < 1) return outcome.error = "grid and block sizes must be at least 1", outcome;
  // The checker's launches run one after another, each in the last one's memory.
  static thread_local Workspace workspace;
  Machine machine(kernel.program, launch, kernel.layouts, outcome, workspace);
  outcome.ok = machine.run();
  outcome.seconds = seconds_since(start);
  return outcome;
}

WitnessOutcome execute_witness(llvm::Module& module, const witness::Launch& description,
                               std::vector<witness::PagedBuffer>& buffers, const std::string& layout_dir) {
  WitnessOutcome result;
  Outcome& outcome = result.outcome;
  auto start = std::chrono::steady_clock::now();
  outcome.error = witness::check_launch(description);
  Program program;
  std::vector<MatrixLayout> layouts;
  if (!outcome.error.empty() || !prepare(module, description.kernel, layout_dir, program, layouts, outcome.error))
    return result;
  for (const Param& param : program.params) {
    bool pointer = param.type.scalar == Scalar::Pointer;
    if (pointer ? !description.views.count(param.name) : !description.scalars.count(param.name))
      return outcome.error = "witness launch: kernel @" + program.kernel + ": no " + (pointer ? "view for pointer" : "scalar for") +
                             " param '" + param.name + "'",
             result;
    auto scalar = description.scalars.find(param.name);
    if (!pointer && !witness::scalar_fits(scalar->second, param.type.bits))
      return outcome.error = witness::scalar_misfit(program.kernel, param.name, scalar->second, param.type.bits), result;
  }
  Launch launch;
  launch.races = false;  // a witness run runs chosen workgroups only: races are the full run's to find
  launch.kernel = description.kernel;
  for (int d = 0; d < 3; ++d) launch.grid[d] = int64_t(description.grid[d]), launch.block[d] = int64_t(description.block[d]);
  launch.scalars.assign(description.scalars.begin(), description.scalars.end());
  for (const auto& [param, view] : description.views)
    for (witness::PagedBuffer& buffer : buffers)
      if (buffer.name() == view.buffer) launch.views.push_back({param, &buffer, view.offset, view.bytes});
  Workspace workspace;
  Machine machine(program, launch, layouts, outcome, workspace);
  for (const witness::Dims& chosen : witness::chosen_workgroups(description)) {
    int64_t group[3] = {int64_t(chosen[0]), int64_t(chosen[1]), int64_t(chosen[2])};
    witness::WorkgroupRun run;
    run.workgroup = chosen;
    run.ok = machine.run_group(group);
    if (!run.ok) run.op = outcome.failed_op, run.workitem = outcome.failed_workitem, run.message = outcome.failed_message;
    run.error = outcome.error;
    outcome.error.clear(), outcome.failed_op.clear(), outcome.failed_message.clear(), outcome.failed_workitem = -1;
    result.runs.push_back(run);
  }
  outcome.ok = true;
  outcome.seconds = seconds_since(start);
  return result;
}

}  // namespace kemit::exec
