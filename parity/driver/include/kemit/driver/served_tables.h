// What the engines serve, asked through the protocol (docs/protocol.md): the flavors a run uses
// (aliases resolved by the workers' `resolve_flavor` op, as the CLIs resolve them) and the
// processors a config may name (hello's `arches`). The harness keeps no copy of an engine table.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "kemit/driver/config.h"
#include "kemit/driver/engine_command.h"
#include "kemit/driver/worker_pool.h"

namespace kemit::driver {

// Canonical flavor names for `requested` (every flavor the first engine serves when empty), in
// the first engine's hello order, without duplicates. Every engine resolves every name, and they
// must agree (InfrastructureError otherwise); alias notes go to `notes`. Throws UsageError
// ("--flavor: unknown flavor ...", the engine's own text) on a name no engine knows.
std::vector<std::string> resolve_flavor_names(WorkerPool& pool, const std::vector<Hello>& hellos,
                                              const std::vector<EngineCommand>& commands,
                                              const std::vector<std::string>& requested, std::ostream& notes);

// An `expect: emit` config must name a processor every engine serves (hello's `arches`): an
// unknown processor can only be refused. Throws ConfigError naming the file, the config and
// the engine; InfrastructureError when an engine's hello lists no arches at all.
void check_config_arches(const std::vector<FamilyConfigs>& families, const std::vector<Hello>& hellos,
                         const std::vector<EngineCommand>& commands);

}  // namespace kemit::driver
