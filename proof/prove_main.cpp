// kemit_prove: the proof lane's worker (docs/contracts.md). One request as JSON on stdin, one
// answer as JSON on stdout:
//   {"canonical": TEXT, "plan": TEXT, "limits": {"max_block_lanes": N, "max_grid_lanes": N,
//    "lds_bytes": N, "wave_size": N}, "llvm": {"llvm19": TEXT, ...}}
//   -> {"sections": [{"section": "canonical", "verdict": "PROVEN", "obligations": N,
//       "by_intervals": N, "by_relations": N, "by_z3": N, "failed": N, "failures": [TEXT, ...],
//       "witness_launch": JSON}, {"section": "llvm19", ...}]}
// The first REFUTED failures' texts end with their witness run in the interpreter (witness_runs.h);
// "witness_launch" is the launch description of the section's first REFUTED witness ("" if none).
// A canonical text or plan that does not parse is an UNPROVEN section naming the line. Exit 0
// with an answer; 2 when stdin is not such a request (the message on stderr).
//
// A request with "questions": [{"name": "%v20", "differ": 0}, ...] (prover.h, CompareQuestion) is
// answered with those alone: {"answers": [{"name", "differ", "launch", "op", "verdict", "how",
// "witness", "text"}, ...]}, one per question and launch that reaches the compare.
//
// `kemit_prove --serve`: a long-lived worker (the lane keeps one per job, sparing a process start
// and z3's setup per config): one request per line on stdin, one answer per line on stdout, in
// order, until end of input. A line that is not a request is answered `{"error": WHY}`.
#include <iostream>
#include <iterator>
#include <optional>

#include <nlohmann/json.hpp>

#include "kemit/proof/prover.h"
#include "witness_runs.h"

namespace {

using nlohmann::json;
using namespace kemit::proof;

// At most this many failure lines per section: the first names the config's problem, the rest are context.
constexpr size_t MAX_FAILURES = 20;
// The first REFUTED failures of a section that get a witness run (each may take up to 10 s).
constexpr int MAX_WITNESS_RUNS = 3;

json section_answer(const std::string& section, const std::vector<Finding>& findings, bool with_lowering,
                    const ProofStats& stats, WitnessRunner& witnesses) {
  std::string witness_launch;
  int witness_runs = 0;
  ProofVerdict worst = ProofVerdict::PROVEN;
  json failures = json::array();
  size_t failed = 0, counted = 0;
  for (const auto& f : findings) {
    if (f.lowering_only && !with_lowering) continue;
    ++counted;
    if (f.verdict == ProofVerdict::PROVEN) continue;
    ++failed;
    if (f.verdict == ProofVerdict::REFUTED || worst == ProofVerdict::PROVEN) worst = f.verdict;
    std::string text = finding_text(f);  // two LLVM flags (inbounds nuw) may stand for one obligation: once
    if (failures.size() >= MAX_FAILURES || (!failures.empty() && failures.back().get<std::string>().rfind(text, 0) == 0))
      continue;
    if (f.verdict == ProofVerdict::REFUTED && !f.witness.empty() && witness_runs++ < MAX_WITNESS_RUNS) {
      const WitnessRun& run = witnesses.run(f.witness);
      text += "; " + run.outcome;
      if (witness_launch.empty()) witness_launch = run.launch;
    }
    failures.push_back(text);
  }
  return {{"section", section},          {"verdict", proof_verdict_name(worst)}, {"obligations", counted},
          {"by_intervals", stats.by_intervals}, {"by_relations", stats.by_relations}, {"by_z3", stats.by_z3},
          {"failed", failed}, {"failures", failures}, {"witness_launch", witness_launch}};
}

json unproven_section(const std::string& section, const std::string& why) {
  return {{"section", section}, {"verdict", "UNPROVEN"}, {"obligations", 1}, {"by_intervals", 0}, {"by_z3", 0},
          {"failed", 1},        {"failures", json::array({"UNPROVEN " + why})}};
}

ArchLimits limits_of(const json& limits) {
  ArchLimits arch;
  arch.max_block_lanes = limits.at("max_block_lanes").get<int64_t>();
  arch.max_grid_lanes = limits.at("max_grid_lanes").get<int64_t>();
  arch.lds_bytes = limits.at("lds_bytes").get<int64_t>();
  arch.wave_size = limits.at("wave_size").get<int64_t>();
  return arch;
}

json compare_answers(const json& request) {
  std::vector<CompareQuestion> questions;
  for (const auto& q : request.at("questions"))
    questions.push_back({q.at("name").get<std::string>(), q.at("differ").get<int64_t>()});
  json answers = json::array();
  try {
    for (const auto& [question, f] : answer_compare_questions(request.at("canonical").get<std::string>(),
                                                              request.at("plan").get<std::string>(),
                                                              limits_of(request.at("limits")), questions))
      answers.push_back({{"name", question.name}, {"differ", question.differ}, {"launch", f.launch}, {"op", f.op},
                         {"verdict", proof_verdict_name(f.verdict)}, {"how", f.how}, {"witness", f.witness},
                         {"text", finding_text(f)}});
  } catch (const std::invalid_argument& e) {
    return {{"error", std::string("kemit_prove: the module or its plan does not read: ") + e.what()}};
  }
  return {{"answers", answers}};
}

json answer(const json& request) {
  if (request.contains("questions")) return compare_answers(request);
  json sections = json::array();
  const json llvm = request.value("llvm", json::object());
  std::vector<Finding> findings;
  ProofStats stats;
  try {
    findings = prove_module(request.at("canonical").get<std::string>(), request.at("plan").get<std::string>(),
                            limits_of(request.at("limits")), ProverOptions{}, &stats);
  } catch (const std::invalid_argument& e) {  // PlanError, ParseError, BuildError: the text names the line
    std::string why = std::string("the module or its plan does not read: ") + e.what();
    sections.push_back(unproven_section("canonical", why));
    for (const auto& [flavor, text] : llvm.items()) sections.push_back(unproven_section(flavor, why));
    return {{"sections", sections}};
  }
  WitnessRunner witnesses(request.at("canonical").get<std::string>(), request.at("plan").get<std::string>());
  sections.push_back(section_answer("canonical", findings, false, stats, witnesses));
  for (const auto& [flavor, text] : llvm.items()) {
    std::vector<Finding> mapped = map_llvm_promises(findings, read_llvm_promises(text.get<std::string>()), flavor);
    sections.push_back(section_answer(flavor, mapped, true, ProofStats{}, witnesses));
  }
  return {{"sections", sections}};
}

// The answer to one request's text, or why it is none (a message for the caller).
std::optional<json> answer_text(const std::string& text, std::string& why) {
  json request = json::parse(text, nullptr, false);
  if (!request.is_object() || !request.contains("canonical") || !request.contains("plan") ||
      !request.contains("limits")) {
    why = "the input is not a request: a JSON object with canonical, plan and limits (docs/contracts.md)";
    return std::nullopt;
  }
  try {
    return answer(request);
  } catch (const json::exception& e) {
    why = std::string("a malformed request: ") + e.what();
    return std::nullopt;
  }
}

int serve() {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::string why;
    std::optional<json> reply = answer_text(line, why);
    std::cout << (reply ? reply->dump() : json{{"error", "kemit_prove: " + why}}.dump()) << std::endl;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);  // iostreams only: a request line is read in blocks, not a getc per byte
  if (argc == 2 && std::string(argv[1]) == "--serve") return serve();
  if (argc > 1) {
    std::cerr << "kemit_prove: takes no arguments but --serve: one JSON request on stdin, or one per line with "
                 "--serve (docs/contracts.md)\n";
    return 2;
  }
  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  std::string why;
  std::optional<json> reply = answer_text(input, why);
  if (!reply) {
    std::cerr << "kemit_prove: " << why << "\n";
    return 2;
  }
  std::cout << reply->dump() << "\n";
  return 0;
}
