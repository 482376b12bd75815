#include "kemit/lane/proofs.h"

#include <sys/resource.h>

#include <cstdint>
#include <mutex>

#include <nlohmann/json.hpp>

#include "kemit/lane_support/result_cache.h"
#include "kemit/lane_support/source_digest.h"
#include "parallel.h"
#include "proof_witness.h"
#include "prover_worker.h"

namespace kemit::lane {
namespace {

using nlohmann::json;

// Bumped whenever this file changes what a cached answer means; the prover's code is in the key by
// its binary's digest.
constexpr const char* kProofCacheVersion = "proof-lane 2";

double children_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

const driver::ArchFacts* find_arch(const std::vector<driver::ArchFacts>& archs, const std::string& name) {
  for (const auto& a : archs)
    if (a.name == name) return &a;
  return nullptr;
}

ProofAnswer unproven_everywhere(const ProofRequest& request, const std::string& why) {
  ProofAnswer answer;
  SectionProof unproven;
  unproven.verdict = "UNPROVEN";
  unproven.detail = why;
  answer.sections["canonical"] = unproven;
  for (const auto& [flavor, text] : request.llvm) answer.sections[flavor] = unproven;
  return answer;
}

// The prover's answer, or nothing when it does not fit the schema (a corrupt cache entry, a broken worker).
std::optional<ProofAnswer> read_answer(const std::string& text) {
  json value = json::parse(text, nullptr, false);
  if (!value.is_object() || !value.contains("sections") || !value["sections"].is_array()) return std::nullopt;
  ProofAnswer answer;
  for (const auto& s : value["sections"]) {
    if (!s.is_object() || !s.contains("section") || !s["section"].is_string() || !s.contains("verdict") ||
        !s["verdict"].is_string() || !s.contains("failures") || !s["failures"].is_array())
      return std::nullopt;
    SectionProof section;
    section.verdict = s["verdict"].get<std::string>();
    section.obligations = s.value("obligations", 0LL);
    if (s.contains("witness_launch") && s["witness_launch"].is_string()) section.witness_launch = s["witness_launch"];
    if (!s["failures"].empty() && s["failures"][0].is_string()) section.detail = s["failures"][0].get<std::string>();
    if (section.verdict != "PROVEN" && section.verdict != "REFUTED" && section.verdict != "UNPROVEN") return std::nullopt;
    answer.sections[s["section"].get<std::string>()] = section;
  }
  return answer;
}

json request_json(const ProofRequest& request, const driver::ArchFacts& arch) {
  json llvm = json::object();
  for (const auto& [flavor, text] : request.llvm) llvm[flavor] = text;
  return {{"canonical", request.canonical},
          {"plan", request.plan},
          {"limits",
           {{"max_block_lanes", arch.max_block_lanes},
            {"max_grid_lanes", arch.max_grid_lanes},
            {"lds_bytes", arch.lds_bytes},
            {"wave_size", arch.wave_size}}},
          {"llvm", llvm}};
}

// The config's first witness (the canonical section's, else the flavor's own) run on each flavor's
// module in that flavor's executor. After the cache: the run shows the verdict, it is no part of it.
ProofAnswer with_executor_runs(ProofAnswer answer, const ProofRequest& request, const ProofOptions& options) {
  auto launch_of = [&](const std::string& section) {
    auto found = answer.sections.find(section);
    bool refuted = found != answer.sections.end() && found->second.verdict == "REFUTED";
    return refuted ? found->second.witness_launch : std::string();
  };
  std::string canonical_launch = launch_of("canonical");
  for (const auto& [flavor, text] : request.llvm) {
    std::string launch = canonical_launch.empty() ? launch_of(flavor) : canonical_launch;
    if (launch.empty()) continue;
    auto checker = options.checkers.find(flavor);
    answer.sections[flavor].executor_run = executor_witness_run(
        checker == options.checkers.end() ? "" : checker->second, flavor, text, launch, options.witness_timeout);
  }
  return answer;
}

ProofAnswer prove_one(const ProofRequest& request, const std::vector<driver::ArchFacts>& archs,
                      const ProofOptions& options, ProverPool& workers, const std::string& prover_digest,
                      lane_support::ResultCache& cache) {
  const driver::ArchFacts* arch = find_arch(archs, request.arch);
  driver::ArchFacts none;
  // A version 1 plan states no contract, whatever the hello says: the prover answers that first.
  bool old_plan = request.plan.rfind("; kemit launch plan 1\n", 0) == 0;
  if (old_plan && !arch) arch = &none;
  if (!old_plan && (!arch || arch->max_block_lanes <= 0 || arch->max_grid_lanes <= 0 || arch->lds_bytes <= 0))
    return unproven_everywhere(request, "the engine's hello gives no launch limits (max_block_lanes, max_grid_lanes, "
                                        "lds_bytes) for " + request.arch + ": update the engine");
  std::string key = cache.enabled() ? proof_cache_key(prover_digest, request, *arch) : "";
  if (cache.enabled())
    if (auto stored = cache.get(key)) {
      if (auto answer = read_answer(*stored)) return *answer;
      cache.reject(key, "not a proof answer");
    }
  std::unique_ptr<ProverWorker> worker = workers.take();
  std::string why;
  std::optional<std::string> line = worker->ask(request_json(request, *arch).dump(), options.timeout, why);
  workers.give(std::move(worker));
  if (!line) return unproven_everywhere(request, why);
  auto answer = read_answer(*line);
  if (!answer) return unproven_everywhere(request, "the prover's answer is not a proof answer: " + line->substr(0, 200));
  if (cache.enabled()) cache.put(key, *line);
  return *answer;
}

}  // namespace

std::string default_prover_path() { return KEMIT_PROVER_PATH; }

// Every part of the prover's request (request_json), added as it is: a warm run hashes the module
// texts once and escapes none of them into JSON.
std::string proof_cache_key(const std::string& prover_digest, const ProofRequest& request,
                            const driver::ArchFacts& arch) {
  lane_support::CacheInputs inputs;
  inputs.add("lane", kProofCacheVersion)
      .add("prover", prover_digest)
      .add("canonical", request.canonical)
      .add("plan", request.plan)
      .add("max_block_lanes", static_cast<std::int64_t>(arch.max_block_lanes))
      .add("max_grid_lanes", static_cast<std::int64_t>(arch.max_grid_lanes))
      .add("lds_bytes", arch.lds_bytes)
      .add("wave_size", arch.wave_size);
  for (const auto& [flavor, text] : request.llvm) inputs.add("llvm " + flavor, text);
  return inputs.key();
}

std::vector<ProofAnswer> run_proofs(const std::vector<ProofRequest>& requests,
                                    const std::vector<driver::ArchFacts>& archs, const ProofOptions& options,
                                    ProofRunStats* stats) {
  std::string prover = options.prover.empty() ? default_prover_path() : options.prover;
  lane_support::ResultCache cache(options.cache_dir);
  std::string digest = cache.enabled() ? lane_support::file_digest(cache, prover) : "";
  double before = children_cpu_seconds();
  std::vector<ProofAnswer> answers(requests.size());
  {
    ProverPool workers(prover);  // its workers end (and are reaped, so their CPU counts) at the block's end
    parallel_for(requests.size(), options.jobs > 0 ? options.jobs : default_jobs(), [&](size_t i) {
      answers[i] =
          with_executor_runs(prove_one(requests[i], archs, options, workers, digest, cache), requests[i], options);
    });
  }
  if (stats) {
    stats->cpu_seconds = children_cpu_seconds() - before;
    stats->cache_summary = cache.summary();
  }
  return answers;
}

void apply_proof(const ProofAnswer& answer, const std::string& flavor, LaneResult& result) {
  if (result.verdict != Verdict::LLVM_OK) return;  // the lane's own failure names the module's problem first
  for (const std::string& section : {std::string("canonical"), flavor}) {
    auto found = answer.sections.find(section);
    if (found == answer.sections.end()) {
      result.verdict = Verdict::PROOF_UNPROVEN;
      result.detail = "the prover gave no " + section + " section";
      return;
    }
    if (found->second.verdict == "PROVEN") continue;
    result.verdict = found->second.verdict == "REFUTED" ? Verdict::PROOF_REFUTED : Verdict::PROOF_UNPROVEN;
    result.detail = found->second.detail;
    auto own = answer.sections.find(flavor);  // the witness run in this module's own executor
    if (result.verdict == Verdict::PROOF_REFUTED && own != answer.sections.end() && !own->second.executor_run.empty())
      result.detail += "; " + own->second.executor_run;
    return;
  }
}

}  // namespace kemit::lane
