// kemit::exec::execute (executor.h): decode, load the layout tables, run.
#include "executor.h"

#include <chrono>

#include "machine.h"
#include "program.h"

namespace kemit::exec {

Outcome execute(llvm::Module& module, Launch& launch, const std::string& layout_dir) {
  Outcome outcome;
  auto start = std::chrono::steady_clock::now();
  Program program;
  if (!decode_kernel(module, launch.kernel, program, outcome.error)) return outcome;
  std::vector<const MmaTable*> tables;
  for (const MmaOp& mma : program.mma_ops) {
    const MmaTable* table = load_mma_table(layout_dir, mma.table, outcome.error);
    if (!table) return outcome;
    for (int i = 0; i < 4; ++i)
      for (const auto& lane : table->cells[i])
        if (int(lane.size()) != mma.widths[i])
          return outcome.error = "layout table " + mma.table + " gives " + "ABCD"[i] + " " + std::to_string(lane.size()) +
                                 " elements per lane; the intrinsic's operand has " + std::to_string(mma.widths[i]),
                 outcome;
    tables.push_back(table);
  }
  for (int d = 0; d < 3; ++d)
    if (launch.grid[d] < 1 || launch.block[d] < 1) return outcome.error = "grid and block sizes must be at least 1", outcome;
  Machine machine(program, launch, tables, outcome);
  outcome.ok = machine.run();
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return outcome;
}

}  // namespace kemit::exec
