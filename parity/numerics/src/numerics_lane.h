// The numerics lane's state and phases (docs/numerics.md): one Item per emitting config, taken
// through the phases check_numerics runs in order (parse_specs, plan_configs, emit_configs,
// run_sections), the result cache's entries and keys, and the lane's reports.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/driver/engine_command.h"
#include "kemit/driver/served_tables.h"
#include "kemit/driver/worker_pool.h"
#include "kemit/lane_support/result_cache.h"
#include "kemit/report/render.h"
#include "kemit/report/run_info.h"
#include "kemit/tooling/locations.h"

namespace kemit::numerics {

using nlohmann::json;

constexpr const char* kTool = "check_numerics";
extern const std::vector<std::string> kVerdicts;

struct SectionResult {
  std::string section = "canonical";
  std::string verdict = "NOT_EXECUTABLE";
  std::string detail;
  json mismatch;  // null unless NUMERIC_MISMATCH
  long long lane_instructions = 0;
  double run_seconds = 0;  // the interpreter's or the executor's own time
  std::string outputs_sha256;  // every output's bytes after every input set ("" unless NUMERIC_OK)
  double seconds = 0;
  bool cached = false;  // its counters were measured by an earlier run
  std::string same_program_as;  // the earlier flavor that ran it: its module decodes to the same program
};

// One emitting config on its way through the lane.
struct Item {
  std::string family;
  int id = 0;
  std::string arch;
  json spec;                             // as the config gives it
  std::optional<driver::ArchFacts> facts;
  json spec_full;                        // with the engine's defaults
  json spec_run;                         // the plan's small spec (null until planned)
  json buffer_range;                     // null, or the lowered buffer range (bytes)
  std::string launch_plan;
  std::vector<std::pair<std::string, std::string>> digests;  // section -> sha256 of its text, in section order
  std::map<std::string, std::string> texts;  // section -> text, once the engine was asked (not for a memo's hit)
  std::vector<SectionResult> results;
  bool stopped = false;                  // a NOT_EXECUTABLE before any section ran
  void stop(const std::string& detail) {
    SectionResult result;
    result.detail = detail;
    results = {result};
    stopped = true;
  }
};


// What every key holds besides the config: the lane's Python sources (plans, references, the
// worker: where inputs, seed, references and the comparison live) and each section's runner.
struct LaneFacts {
  std::string python_digest;
  std::map<std::string, std::string> runners;  // section -> "interpreter <sha256>" / "executor <sha256>"
  std::map<std::string, int> majors;            // flavor section -> its LLVM major (hello's flavor_facts)
  std::string engine_digest;  // the default C++ engine's binary; "" (no emit memo) for any other engine
  std::vector<std::string> sections;
};

constexpr const char* kPlan = "";
constexpr const char* kEmit = "emit";

// The cache key of a config's plan (kPlan), its engine answer (kEmit) or one section's verdict.
std::string cache_key(const LaneFacts& lane, const Item& item, const std::string& section);

// ---- the result cache's entries (cache_entries.cpp) ------------------------------------------

json parse_stored(const std::string& text);
bool decode_plan(const json& value, Item& item);
json emit_memo(const Item& item);
bool take_emit_memo(const json& value, Item& item);
json encode_result(const SectionResult& r);
std::optional<SectionResult> decode_result(const json& value, const std::string& section);

// ---- the phases (phases.cpp) -----------------------------------------------------------------

// The numerics workers, started on the first request the cache cannot answer.
class NumericsWorkers {
 public:
  NumericsWorkers(driver::EngineCommand command, driver::PoolOptions pool)
      : command_(std::move(command)), pool_options_(pool) {}
  std::vector<driver::Answer> run(const std::vector<json>& requests, const driver::ProgressFn& progress);

 private:
  driver::EngineCommand command_;
  driver::PoolOptions pool_options_;
  std::unique_ptr<driver::WorkerPool> pool_;
};

void parse_specs(std::vector<Item>& items, driver::WorkerPool& engine, const driver::Hello& hello);
void plan_configs(std::vector<Item>& items, const LaneFacts& lane, lane_support::ResultCache& plans,
                  NumericsWorkers& workers);
void emit_configs(std::vector<Item>& items, driver::WorkerPool& engine, const LaneFacts& lane,
                  lane_support::ResultCache& memo);
void run_sections(std::vector<Item>& items, const LaneFacts& lane, lane_support::ResultCache& cache,
                  NumericsWorkers& workers, driver::WorkerPool& engine, lane_support::ResultCache& memo);
// Each flavor section that passed with outputs not bit-identical to the canonical section's
// becomes NUMERIC_DIVERGED (after the cache: the rule judges stored and fresh results alike).
void compare_sections(std::vector<Item>& items);

// ---- the reports (numerics_report.cpp) -------------------------------------------------------

std::string python_json(const json& value);

struct FamilyRun {
  std::string family;
  bool has_configs = false;
  std::vector<const Item*> items;
};

report::Report build_report(const tooling::Locations& where, const std::vector<FamilyRun>& runs,
                            const report::RunInfo& info);
json lane_json(const std::vector<FamilyRun>& runs, const report::Report& summary, const std::vector<std::string>& sections,
               double wall);
void print_text(std::ostream& out, const tooling::Locations& where, const std::vector<FamilyRun>& runs,
                const report::Report& summary, const std::vector<std::string>& sections, double wall,
                const lane_support::ResultCache& cache, const lane_support::ResultCache& plans);

}  // namespace kemit::numerics
