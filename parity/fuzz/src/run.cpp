// The fuzz run: draw specs in batches, check them in every lane, tally, then shrink one spec per
// distinct failure and (with --promote) append it to the family's parity configs.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <future>
#include <set>

#include "kemit/fuzz/fuzz.h"
#include "kemit/fuzz/promote.h"

namespace kemit::fuzz {
namespace {

using nlohmann::json;
constexpr size_t kDomainMissExamples = 5;

double cpu_seconds() {
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage usage{};
    getrusage(who, &usage);
    total += usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  }
  return total;
}

std::vector<std::string> arch_names(const std::vector<driver::ArchFacts>& facts) {
  std::vector<std::string> names;
  for (const auto& fact : facts) names.push_back(fact.name);
  return names;
}

std::vector<const Domain*> selected_domains(const std::map<std::string, Domain>& domains, const RunSettings& settings,
                                            const std::vector<std::string>& served) {
  std::vector<const Domain*> out;
  for (const auto& [family, domain] : domains) {
    if (!family_selected(family, settings.only)) continue;
    if (std::find(served.begin(), served.end(), family) == served.end())
      throw driver::InfrastructureError("family " + family + " has a domain (" + domain.path() +
                                        ") but an engine does not serve it; build both engines or remove the domain");
    out.push_back(&domain);
  }
  for (const auto& family : served)
    if (family_selected(family, settings.only) && !domains.count(family))
      throw driver::UsageError("family " + family + " has no domain: write parity/domains/" + family +
                               ".json (docs/fuzz.md)");
  if (out.empty()) throw driver::UsageError("--only matches no family with a domain");
  return out;
}

void tally_one(RunTally& tally, const DrawnSpec& drawn, const SpecResult& result) {
  FamilyTally& family = tally.families[drawn.family];
  ++tally.specs, ++family.specs, ++tally.kinds[draw_kind_name(drawn.kind)];
  family.accepted += result.validated;
  family.modules += result.modules_checked;
  family.numerics_ok += result.numerics == "NUMERIC_OK";
  family.numerics_skipped += result.numerics == "SKIPPED";
  if (result.numerics == "SKIPPED") tally.skipped.push_back({drawn, "numerics", result.skip_reason});
  auto failed_in = [&](const char* lane) {
    return std::any_of(result.failures.begin(), result.failures.end(), [&](const Failure& f) { return f.lane == lane; });
  };
  family.parity_failed += failed_in("parity");
  family.llvm_failed += failed_in("llvm");
  family.llvm_passed += result.modules_checked > 0 && !failed_in("llvm");
  family.numerics_failed += failed_in("numerics");
  bool predicted = drawn.predicted == Prediction::valid;
  if (predicted == result.reference_accepts) ++tally.domain_agrees;
  else if (tally.domain_misses.size() < kDomainMissExamples)
    tally.domain_misses.push_back(drawn.family + " " + drawn.arch + " " + drawn.spec.dump() + ": domain says " +
                                  prediction_name(drawn.predicted) + ", the reference engine " +
                                  (result.reference_accepts ? "accepts it" : "refuses it"));
  if (result.failures.empty()) return;
  ++family.failed, ++tally.failing_specs;
  for (const auto& found : tally.failures)
    if (found.spec.family == drawn.family && found.failure.signature() == result.failures.front().signature()) return;
  tally.failures.push_back({drawn, result.failures.front(), {}, false, "", 0});
}

std::string why_line(const FoundFailure& found, uint64_t seed) {
  const Failure& failure = found.shrunk_done ? found.shrunk.failure : found.failure;
  return "fuzz seed " + std::to_string(seed) + " spec " + std::to_string(found.spec.index) + ": " + failure.lane +
         " " + failure.verdict + (failure.section.empty() ? "" : " at " + failure.section) + ", shrunk";
}

void shrink_and_promote(const RunSettings& settings, const std::map<std::string, Domain>& domains, FuzzLanes& lanes,
                        RunTally& tally, std::ostream& notes) {
  int shrinks = 0;
  for (auto& found : tally.failures) {
    if (shrinks++ >= settings.max_shrinks) break;
    notes << "kemit_fuzz: shrinking " << found.spec.family << " spec " << found.spec.index << " ("
          << found.failure.signature() << ")\n";
    found.shrunk = shrink(lanes, domains.at(found.spec.family), found.spec, found.failure);
    found.shrunk_done = true;
    PromotedConfig config{found.spec.family, found.shrunk.spec.arch, found.shrunk.result.reference_accepts,
                          why_line(found, tally.seed), found.shrunk.spec.spec};
    found.config_line = config_line(0, config);
    if (!settings.promote) continue;
    std::string root = settings.lanes.check.locations.root;
    std::string dir = settings.lanes.check.configs_dir.empty() ? root + "/parity/configs" : settings.lanes.check.configs_dir;
    std::string file = dir + "/" + found.spec.family + ".json";
    found.promoted_id = append_config(file, file, config);
    found.config_line = config_line(found.promoted_id, config);
  }
}

// A pipeline of two: while the engines answer batch i (a second thread), this thread judges batch
// i - 1 and draws batch i + 1, so that the fuzzer's own work (drawing, compare, LLVM lane,
// numerics) does not leave the engines idle between batches. The tallies are taken in draw
// order, as one batch at a time would.
void run_batches(const RunSettings& settings, FuzzLanes& lanes, SpecDrawer& drawer,
                 const std::function<double()>& elapsed, RunTally& tally) {
  long drawn = 0;
  auto draw_batch = [&] {
    std::vector<DrawnSpec> batch;
    bool more = (settings.budget_specs == 0 || drawn < settings.budget_specs) &&
                (settings.budget_seconds == 0 || elapsed() < settings.budget_seconds);
    long size = settings.budget_specs ? std::min<long>(settings.batch, settings.budget_specs - drawn) : settings.batch;
    for (long i = 0; more && i < size; ++i, ++drawn) batch.push_back(drawer.draw());
    return batch;
  };
  std::vector<DrawnSpec> previous, batch = draw_batch();
  FuzzLanes::EngineAnswers previous_answers;
  while (!batch.empty() || !previous.empty()) {
    auto asking = std::async(std::launch::async, [&lanes, &batch] {
      return batch.empty() ? FuzzLanes::EngineAnswers{} : lanes.ask(batch);
    });
    if (!previous.empty()) {
      auto results = lanes.judge(previous, previous_answers);
      for (size_t i = 0; i < previous.size(); ++i) tally_one(tally, previous[i], results[i]);
    }
    std::vector<DrawnSpec> next = batch.empty() ? std::vector<DrawnSpec>{} : draw_batch();
    previous_answers = asking.get();
    previous = std::move(batch);
    batch = std::move(next);
  }
}

}  // namespace

bool family_selected(const std::string& family, const std::vector<std::string>& only) {
  if (only.empty()) return true;
  for (const auto& part : only)
    if (family.find(part) != std::string::npos) return true;
  return false;
}

RunTally run_fuzz(const RunSettings& settings, std::ostream& notes) {
  RunTally tally;
  tally.seed = settings.seed;
  double cpu_start = cpu_seconds();
  auto start = std::chrono::steady_clock::now();
  {
    FuzzLanes lanes(settings.lanes);
    lanes.start();
    auto domains = load_domains(settings.domains_dir, "parity/domains", lanes.arch_facts());
    auto families = selected_domains(domains, settings, lanes.families());
    SpecDrawer drawer(settings.seed, families, settings.archs.empty() ? arch_names(lanes.arch_facts()) : settings.archs);
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    run_batches(settings, lanes, drawer, elapsed, tally);
    tally.seconds = elapsed();
    shrink_and_promote(settings, domains, lanes, tally, notes);
  }  // the workers end here, so their CPU time is counted
  tally.cpu_seconds = cpu_seconds() - cpu_start;
  return tally;
}

std::string reproduce_commands(const RunSettings& settings, const DrawnSpec& spec, const Failure& failure) {
  std::string quoted = "'" + spec.spec.dump() + "'";
  std::string target = " --family " + spec.family + " --arch " + spec.arch + " --spec " + quoted;
  std::string out = "build/parity/kemit_fuzz" + target + (failure.lane == "numerics" ? " --numerics" : "") +
                    (failure.lane == "llvm" && settings.lanes.codegen ? " --codegen" : "");
  if (failure.lane == "parity" || failure.lane == "llvm") {
    std::string flavor = failure.section == "canonical" || failure.section.empty() ? " --canonical"
                                                                                    : " --flavor " + failure.section;
    out += "\nPYTHONPATH=py_engine /usr/bin/python3 -m kemit.emit" + target + flavor;
    out += "\nbuild/cpp_engine/kemit_emit" + target + flavor;
  }
  return out;
}

}  // namespace kemit::fuzz
