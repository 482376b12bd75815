#include "kemit/proof/prover.h"

#include "kemit/ir/parser.h"
#include "launch_obligations.h"

namespace kemit::proof {
namespace {

Finding module_finding(const std::string& kind, const std::string& why) {
  Finding f;
  f.kind = kind;
  f.verdict = ProofVerdict::UNPROVEN;
  f.how = why;
  return f;
}

const ir::Kernel* find_kernel(const std::vector<ir::Kernel>& kernels, const std::string& name) {
  for (const auto& k : kernels)
    if (k.name == name) return &k;
  return nullptr;
}

// 64-bit terms (bit-blasting a 128-bit product costs z3 seconds) unless the contract's own values
// pass 2^62; a launch whose walk finds a value past 2^62 is proven again at 128 bits, its 64-bit
// findings dropped. One z3 context serves the module's every launch (its setup costs more than a query).
// With `questions`, their answers go to `answers` as well (answer_compare_questions).
void prove_launch(z3::context& ctx, const ir::Kernel& kernel, const Plan& plan, int index, const ArchLimits& arch,
                  const ProverOptions& options, ProofStats& counts, std::vector<Finding>& findings,
                  const std::vector<CompareQuestion>* questions = nullptr, std::vector<CompareAnswer>* answers = nullptr) {
  bool wide = LaunchModel(ctx, plan, index, NARROW_BITS).contract_too_narrow();
  for (unsigned bits : {NARROW_BITS, WIDE_BITS}) {
    if (wide && bits == NARROW_BITS) continue;
    size_t first = findings.size(), first_answer = answers ? answers->size() : 0;
    ProofStats launch_counts;
    LaunchModel model(ctx, plan, index, bits);
    ObligationSolver solver(model, options, launch_counts);
    launch_obligations(kernel, model, solver, arch, options, launch_counts, findings);
    KernelWalk walk(model, solver, launch_counts, arch, findings);
    if (questions) walk.ask(*questions, *answers);
    walk.walk(kernel);
    if (model.too_narrow() && bits == NARROW_BITS) {
      findings.resize(first);
      if (answers) answers->resize(first_answer);
      continue;
    }
    counts.obligations += launch_counts.obligations;
    counts.by_intervals += launch_counts.by_intervals;
    counts.by_relations += launch_counts.by_relations;
    counts.by_z3 += launch_counts.by_z3;
    counts.refuted += launch_counts.refuted;
    counts.unproven += launch_counts.unproven;
    return;
  }
}

}  // namespace

const char* proof_verdict_name(ProofVerdict verdict) {
  switch (verdict) {
    case ProofVerdict::PROVEN: return "PROVEN";
    case ProofVerdict::REFUTED: return "REFUTED";
    default: return "UNPROVEN";
  }
}

std::vector<Finding> prove_module(const std::string& canonical, const std::string& plan_text, const ArchLimits& arch,
                                  const ProverOptions& options, ProofStats* stats) {
  ProofStats local;
  ProofStats& counts = stats ? *stats : local;
  std::vector<Finding> findings;
  Plan plan = parse_plan(plan_text);
  if (plan.version == 1) {
    findings.push_back(module_finding("contract", "plan version 1 has no contract"));
    ++counts.obligations;
    ++counts.unproven;
    return findings;
  }
  std::vector<ir::Kernel> kernels = ir::parse_module(canonical);
  z3::context ctx;
  for (size_t i = 0; i < plan.launches.size(); ++i) {
    const ir::Kernel* kernel = find_kernel(kernels, plan.launches[i].kernel);
    if (!kernel) {
      findings.push_back(module_finding("kernel", "launch " + std::to_string(i) + " names kernel '" +
                                                      plan.launches[i].kernel + "', which the module does not hold"));
      findings.back().launch = static_cast<int>(i);
      ++counts.obligations;
      ++counts.unproven;
      continue;
    }
    prove_launch(ctx, *kernel, plan, static_cast<int>(i), arch, options, counts, findings);
  }
  return findings;
}

std::vector<CompareAnswer> answer_compare_questions(const std::string& canonical, const std::string& plan_text,
                                                    const ArchLimits& arch, const std::vector<CompareQuestion>& questions,
                                                    const ProverOptions& options) {
  std::vector<CompareAnswer> answers;
  std::vector<Finding> findings;
  Plan plan = parse_plan(plan_text);
  if (plan.version == 1 || questions.empty()) return answers;  // no contract: no launch to reason about
  std::vector<ir::Kernel> kernels = ir::parse_module(canonical);
  z3::context ctx;
  ProofStats counts;
  for (size_t i = 0; i < plan.launches.size(); ++i)
    if (const ir::Kernel* kernel = find_kernel(kernels, plan.launches[i].kernel))
      prove_launch(ctx, *kernel, plan, static_cast<int>(i), arch, options, counts, findings, &questions, &answers);
  return answers;
}

std::string finding_text(const Finding& f) {
  std::string text = std::string(proof_verdict_name(f.verdict)) + " " + f.kind +
                     (f.op.empty() ? "" : " of `" + f.op + "`") + " (" + f.section;
  if (!f.llvm_name.empty()) text += " " + f.llvm_name;
  if (!f.kernel.empty()) text += ", kernel " + f.kernel;
  text += ")";
  if (!f.contract.empty()) text += " at " + f.contract;
  if (!f.how.empty() && f.verdict != ProofVerdict::PROVEN) text += ": " + f.how;
  if (!f.witness.empty()) text += "; witness " + f.witness;
  return text;
}

}  // namespace kemit::proof
