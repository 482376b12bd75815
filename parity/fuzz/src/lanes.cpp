// The three lanes over a batch of drawn specs.
#include "kemit/fuzz/lanes.h"

#include <algorithm>
#include <sstream>
#include <thread>

#include "kemit/driver/config.h"
#include "kemit/driver/served_tables.h"
#include "kemit/lane/lane.h"
#include "kemit/lane_support/result_cache.h"
#include "kemit/lane_support/source_digest.h"

namespace kemit::fuzz {
namespace {

using nlohmann::json;
const char* const kFuzzConfigPath = "fuzz";  // what the judge prints where a config file would be
// A spec as large as the largest numbered config runs tens of CPU seconds in the interpreter; on a
// shared machine that gives the fuzzer a tenth of a core, 300 s would be a TIMEOUT of the machine, not
// of the spec. --timeout raises it further.
constexpr double kNumericsTimeoutSeconds = 900;

driver::ParityConfig as_config(const DrawnSpec& drawn, bool emit) {
  driver::ParityConfig config;
  config.id = static_cast<int>(drawn.index);
  config.arch = drawn.arch;
  config.spec = drawn.spec;
  config.expect = emit ? driver::Expect::emit : driver::Expect::reject;
  return config;
}

bool status_ok(const driver::Answer& answer) {
  return answer.kind == driver::AnswerKind::response && answer.response.is_object() &&
         answer.response.value("status", "") == "ok";
}

std::vector<std::string> intersect(std::vector<std::string> a, std::vector<std::string> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::vector<std::string> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

bool same_facts(const driver::ArchFacts& a, const driver::ArchFacts& b) {
  return a.name == b.name && a.wave_size == b.wave_size && a.lds_bytes == b.lds_bytes && a.mma == b.mma &&
         a.fp8_format == b.fp8_format;
}

// The domains judge a spec by each processor's LDS size and matrix-core kind: both engines must
// state them (hello's arch_facts, docs/protocol.md) and state them alike.
std::vector<driver::ArchFacts> agreed_arch_facts(const std::vector<driver::Hello>& hellos,
                                                 const std::vector<driver::EngineCommand>& commands) {
  for (size_t e = 0; e < hellos.size(); ++e) {
    const auto& facts = hellos[e].arch_facts;
    bool complete = !facts.empty() && std::all_of(facts.begin(), facts.end(), [](const driver::ArchFacts& f) {
      return f.lds_bytes > 0 && !f.mma.empty();
    });
    if (!complete)
      throw driver::InfrastructureError("the " + commands[e].name + " engine's hello lists no arch_facts with lds_bytes "
                                        "and mma (an older engine?); kemit_fuzz judges specs by them "
                                        "(docs/protocol.md, hello)");
  }
  const auto& first = hellos[0].arch_facts;
  for (size_t e = 1; e < hellos.size(); ++e)
    if (!std::equal(first.begin(), first.end(), hellos[e].arch_facts.begin(), hellos[e].arch_facts.end(), same_facts))
      throw driver::InfrastructureError("the " + commands[0].name + " and " + commands[e].name +
                                        " engines' hellos state different arch_facts; regenerate both engines' "
                                        "tables from tables/archs.json (tables/gen_tables.py)");
  return first;
}

driver::EngineCommand numerics_command(const FuzzOptions& options) {
  const auto& where = options.check.locations;
  if (!options.numerics_cmd.empty()) return driver::custom_command("numerics", options.numerics_cmd, where);
  return {"numerics",
          {"/usr/bin/python3", where.root + "/parity/numerics/numerics_worker.py", "--serve", "--build", where.build},
          {}};
}

// The work limit above which a fuzzed spec is SKIPPED (numerics_worker.py, `work_limit`): measured
// by the worker over the numbered emitting configs (about 20 s), and kept in the result cache under
// everything it depends on: the configs, the lane's Python sources and the C++ engine's binary. Only
// the tree's own worker's figure is kept: another command's (`--numerics-cmd`) comes from code the
// key cannot name, and served to the tree's worker it would skip what that worker could run.
long long numerics_work_limit(const FuzzOptions& options, driver::WorkerPool& numerics) {
  const auto& where = options.check.locations;
  std::string folder = options.check.configs_dir.empty() ? where.root + "/parity/configs" : options.check.configs_dir;
  json configs = json::array();
  for (const auto& family : driver::load_config_dir(folder, folder, {}))
    for (const auto& config : family.configs) {
      if (config.expect != driver::Expect::emit) continue;
      configs.push_back({{"family", family.family}, {"id", config.id}, {"arch", config.arch}, {"spec", config.spec}});
    }
  lane_support::ResultCache cache(lane_support::resolve_cache_dir("", false, where.build));
  std::string key;
  if (cache.enabled() && options.numerics_cmd.empty()) {
    std::string sources = lane_support::tree_digest(where.root + "/parity/numerics", "parity/numerics", ".py");
    std::string engine = lane_support::file_digest(cache, where.build + "/cpp_engine/kemit_emit");
    std::string listed = configs.dump();
    key = lane_support::ResultCache::key({"numerics-fuzz-limit 6", sources, engine, listed});
    if (auto stored = cache.get(key)) {
      if (!stored->empty() && stored->find_first_not_of("0123456789") == std::string::npos && stored->size() < 19)
        return std::stoll(*stored);
      cache.reject(key, "its value is not a work figure");
    }
  }
  auto answer = numerics.run({{{"op", "work_limit"}, {"configs", configs}}}, nullptr).at(0).at(0);
  if (answer.kind != driver::AnswerKind::response || !answer.response.contains("work_limit") ||
      !answer.response["work_limit"].is_number_unsigned())
    throw driver::InfrastructureError("the numerics worker gave no work limit: " +
                                      (answer.kind == driver::AnswerKind::response ? answer.response.dump() : answer.detail));
  long long limit = answer.response["work_limit"].get<long long>();
  if (!key.empty()) cache.put(key, std::to_string(limit));
  return limit;
}

}  // namespace

FuzzLanes::FuzzLanes(FuzzOptions options) : options_(std::move(options)) {}
FuzzLanes::~FuzzLanes() = default;

void FuzzLanes::start() {
  std::ostringstream notes;
  auto commands = driver::engine_commands(options_.check);
  engines_ = std::make_unique<driver::WorkerPool>(commands, driver::pool_options_for(options_.check));
  auto hellos = engines_->start();
  flavors_ = driver::resolve_flavor_names(*engines_, hellos, commands, options_.check.flavors, notes);
  driver::require_flavors_served(hellos, commands, flavors_);
  families_ = intersect(hellos[0].families, hellos[1].families);
  arch_facts_ = agreed_arch_facts(hellos, commands);
  flavor_facts_ = hellos[0].flavor_facts;
  if (options_.llvm && flavor_facts_.empty())
    throw driver::InfrastructureError("the " + commands[0].name + " engine's hello lists no flavor_facts; the LLVM "
                                      "lane checks modules against them (--no-llvm skips the lane)");
  if (!options_.numerics) return;
  driver::PoolOptions pool = driver::pool_options_for(options_.check);
  // A worker's first spec also measures the largest numbered config (numerics_worker.py), and the
  // interpreter is slow on a loaded machine: give a numerics request room.
  pool.timeout_seconds = std::max(pool.timeout_seconds, kNumericsTimeoutSeconds);
  numerics_ = std::make_unique<driver::WorkerPool>(std::vector<driver::EngineCommand>{numerics_command(options_)}, pool);
  numerics_families_ = numerics_->start()[0].families;
  numerics_work_limit_ = numerics_work_limit(options_, *numerics_);
}

FuzzLanes::EngineAnswers FuzzLanes::ask_engines(const std::vector<json>& requests) {
  return engines_->run(requests, nullptr);
}

std::vector<std::string> FuzzLanes::engine_names() const {
  std::vector<std::string> names;
  for (const auto& command : driver::engine_commands(options_.check)) names.push_back(command.name);
  return names;
}

std::vector<SpecResult> FuzzLanes::check(const std::vector<DrawnSpec>& specs) { return judge(specs, ask(specs)); }

FuzzLanes::EngineAnswers FuzzLanes::ask(const std::vector<DrawnSpec>& specs) {
  std::vector<json> requests;
  for (const auto& drawn : specs) requests.push_back(driver::emit_request(drawn.family, as_config(drawn, true), flavors_));
  return engines_->run(requests, nullptr);
}

std::vector<SpecResult> FuzzLanes::judge(const std::vector<DrawnSpec>& specs, const EngineAnswers& answers) {
  driver::CompareContext context{{"py", "cpp"}, flavors_, options_.check.locations, kFuzzConfigPath};
  context.digests = false;  // the fuzzer writes no golden and reports no digest
  std::vector<SpecResult> results(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    SpecResult& result = results[i];
    // The fuzzer has no expectation of its own: the reference engine's decision stands in for
    // it, so only a disagreement between the engines (or a crash) fails.
    result.reference_accepts = status_ok(answers[0][i]);
    result.parity = driver::compare_config(as_config(specs[i], result.reference_accepts), answers[0][i],
                                           answers[1][i], context);
    result.validated = result.parity.validated;
    for (const auto& section : result.parity.sections)
      if (driver::verdict_fails(section.verdict))
        result.failures.push_back({"parity", driver::verdict_name(section.verdict), section.section, section.detail});
  }
  if (options_.llvm) check_llvm(specs, answers, results);
  if (options_.numerics) check_numerics(specs, results);
  return results;
}

void FuzzLanes::check_llvm(const std::vector<DrawnSpec>& specs, const std::vector<std::vector<driver::Answer>>& answers,
                           std::vector<SpecResult>& results) {
  std::vector<lane::LaneModule> modules;
  std::vector<size_t> owner;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!results[i].validated) continue;
    const json& ll = answers[1][i].response.at("ll");  // the C++ engine's: the one that ships
    for (const auto& section : results[i].parity.sections) {
      if (section.verdict != driver::Verdict::identical || section.section == "canonical") continue;
      modules.push_back({specs[i].family, static_cast<int>(specs[i].index), section.section, specs[i].arch,
                         ll.at(section.section).at("text").get<std::string>(), false});
      owner.push_back(i);
    }
  }
  if (modules.empty()) return;
  lane::LaneOptions lane_options;
  lane_options.run_codegen = options_.codegen;
  lane_options.jobs = options_.check.jobs;
  lane_options.flavors = flavor_facts_;
  auto checked = lane::check_modules(modules, lane_options);
  for (size_t m = 0; m < modules.size(); ++m) {
    SpecResult& result = results[owner[m]];
    ++result.modules_checked;
    if (checked[m].verdict != lane::Verdict::LLVM_OK)
      result.failures.push_back({"llvm", lane::verdict_name(checked[m].verdict), modules[m].flavor, checked[m].detail});
  }
}

void FuzzLanes::check_numerics(const std::vector<DrawnSpec>& specs, std::vector<SpecResult>& results) {
  std::vector<json> requests;
  std::vector<size_t> owner;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!results[i].validated || !results[i].failures.empty()) continue;
    if (std::find(numerics_families_.begin(), numerics_families_.end(), specs[i].family) == numerics_families_.end()) {
      results[i].numerics = "SKIPPED";
      results[i].skip_reason = "the numerics lane has no plan for " + specs[i].family + " (parity/numerics/references/" +
                               specs[i].family + ".py)";
      continue;
    }
    requests.push_back({{"op", "numerics"}, {"family", specs[i].family}, {"config", specs[i].index},
                        {"arch", specs[i].arch}, {"spec", specs[i].spec}, {"work_limit", numerics_work_limit_}});
    owner.push_back(i);
  }
  if (requests.empty()) return;
  auto answers = numerics_->run(requests, nullptr)[0];
  for (size_t r = 0; r < requests.size(); ++r) {
    SpecResult& result = results[owner[r]];
    const auto& answer = answers[r];
    if (answer.kind != driver::AnswerKind::response || answer.response.value("status", "") != "ok") {
      result.numerics = answer.kind == driver::AnswerKind::timeout ? "TIMEOUT" : "CRASH";
      std::string detail = answer.kind == driver::AnswerKind::response ? answer.response.dump() : answer.detail;
      result.failures.push_back({"numerics", result.numerics, "", detail});
      continue;
    }
    result.numerics = answer.response.value("verdict", "CRASH");
    if (result.numerics == "SKIPPED") result.skip_reason = answer.response.value("detail", "(the worker gave no reason)");
    if (result.numerics != "NUMERIC_OK" && result.numerics != "SKIPPED")
      result.failures.push_back({"numerics", result.numerics, answer.response.value("section", ""),
                                 answer.response.value("detail", "")});
  }
}

}  // namespace kemit::fuzz
