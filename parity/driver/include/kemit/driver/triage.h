// Cross-lowering triage of MISMATCH flavor sections (docs/driver.md, "Triage").
//
// When the canonical texts agree but a flavor's LLVM text differs, each engine's canonical text
// is lowered by the other engine's lowerer: the C++ one in process (parse, then lower), the
// Python one through its worker (`{"op": "lower"}`, docs/protocol.md). The detail of the
// section then names the side that drifted, LOWERING_DRIFT(py) or LOWERING_DRIFT(cpp); when the
// canonical texts differ it says the builders diverged. The verdict stays MISMATCH.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/driver/compare.h"
#include "kemit/driver/worker_pool.h"

namespace kemit::driver {

// One flavor section to explain: the two answers of its config (engine order of the run).
struct TriageItem {
  ConfigResult* config = nullptr;
  size_t section = 0;  // index into config->sections
  std::string flavor;
  const nlohmann::json* answers[2] = {nullptr, nullptr};
};

// MISMATCH flavor sections of a config whose two answers both emitted.
std::vector<TriageItem> triage_items(ConfigResult& config, const Answer& first, const Answer& second);

// The explanation of one item, given the other lowerers' texts: `cpp_lowers_py` is the C++ lowerer
// on the Python canonical text, `py_lowers_cpp` the Python lowerer on the C++ one (or the error
// that kept it from answering). Engine 0 is py, engine 1 cpp.
std::string explain_drift(const TriageItem& item, const std::string& cpp_lowers_py, const std::string& py_lowers_cpp,
                          const std::string& py_problem);

// The C++ lowerer on a canonical text (parse, then lower at `flavor`); throws on a parse error.
std::string lower_in_process(const std::string& canonical, const std::string& flavor);

// Appends the triage to the detail of every item (asks the pool's Python workers to lower).
void triage_lowering(WorkerPool& pool, const std::vector<std::string>& engines, std::vector<TriageItem>& items);

}  // namespace kemit::driver
