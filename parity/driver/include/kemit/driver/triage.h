// Cross-lowering triage of MISMATCH flavor sections (docs/driver.md, "Triage").
//
// When the canonical texts agree but a flavor's LLVM text differs, each engine's canonical text
// is lowered by the other engine's lowerer, through that engine's worker (`{"op": "lower"}`,
// docs/protocol.md): the driver never parses or lowers IR itself. The detail of the section then
// names the side that drifted, LOWERING_DRIFT(<engine>); when the canonical texts differ it says
// the builders diverged. The verdict stays MISMATCH.
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

// What one engine's lowerer made of the other engine's canonical text: its text, or the problem
// that kept it from answering (a crash, an `error` answer such as a parse error).
struct CrossLowering {
  std::string text;
  std::string problem;
};

// The explanation of one item. `engines` are the two engines' names in run order (the first is
// the reference, the second the port); `first_lowers_second` is the first engine's lowerer on
// the second engine's canonical text, and the other way round.
std::string explain_drift(const TriageItem& item, const std::vector<std::string>& engines,
                          const CrossLowering& first_lowers_second, const CrossLowering& second_lowers_first);

// Appends the triage to the detail of every item: asks each engine's workers to lower the other
// engine's canonical text.
void triage_lowering(WorkerPool& pool, const std::vector<std::string>& engines, std::vector<TriageItem>& items);

}  // namespace kemit::driver
