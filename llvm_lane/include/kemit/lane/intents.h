// Performance intents (docs/isa_profile.md, "Intents"): per family, properties every emitting
// config must show in its compiled code, written as muparser expressions over the config's spec
// and its kernels' ISA profiles, in parity/intents/<family>.json (read by family_intents.h).
// Checked after the result cache, so an edited intent needs no recompile.
#pragma once
#include <nlohmann/json.hpp>

#include "kemit/lane/family_intents.h"
#include "kemit/lane/lane.h"

namespace kemit::lane {

// The module's result against its family's intents, kernel by kernel: the first intent a kernel
// breaks turns an LLVM_OK result into INTENT_BROKEN, naming the intent, its expression and the
// values it saw. Other verdicts are left alone.
void apply_intents(const FamilyIntents& intents, const nlohmann::json& spec, const LaneModule& module,
                   LaneResult& result);

// The module's static roofline (roofline_of) with the lowest occupancy of its kernels, into
// result.roofline when its family states one and llc ran. Information: the verdict is left alone.
void attach_roofline(const FamilyIntents& intents, const nlohmann::json& spec, const LaneModule& module,
                     LaneResult& result);

}  // namespace kemit::lane
