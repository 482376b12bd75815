#include "lane_cache.h"

#include <nlohmann/json.hpp>

#include "checker_phase.h"
#include "kemit/input_limits.h"

namespace kemit::lane {
namespace {

constexpr Verdict kAllVerdicts[] = {Verdict::LLVM_OK,       Verdict::PARSE_ERROR, Verdict::VERIFY_ERROR,
                                    Verdict::UNKNOWN_INTRINSIC, Verdict::CODEGEN_ERROR, Verdict::CRASH,
                                    Verdict::TOOLCHAIN_MISSING, Verdict::SPILL};

std::optional<Verdict> verdict_named(const std::string& name) {
  for (Verdict verdict : kAllVerdicts)
    if (name == verdict_name(verdict)) return verdict;
  return std::nullopt;
}

// Field order of KernelResources, one source for writing and reading.
#define KEMIT_LANE_KERNEL_FIELDS(X)                                                                         \
  X(vgpr_count) X(agpr_count) X(sgpr_count) X(vgpr_spill_count) X(sgpr_spill_count)                       \
  X(private_segment_fixed_size) X(group_segment_fixed_size) X(wavefront_size) X(kernarg_segment_size)            \
  X(max_flat_workgroup_size)

IsaCounts read_counts(const nlohmann::json& object) {
  IsaCounts counts;
  for (const auto& [name, count] : object.items()) {
    if (!count.is_number_integer()) throw std::invalid_argument("ISA count " + name + " is not an integer");
    counts[name] = count.get<int64_t>();
  }
  return counts;
}

bool is_digest(const std::string& text) {
  return text.size() == 64 &&
         text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// A value of the schema's shape that no run of the lane could have produced, or "".
std::string schema_problem(const LaneResult& result, const VerdictInputs& inputs) {
  if (!worth_caching(result)) return std::string("verdict ") + verdict_name(result.verdict) + " is never stored";
  for (const auto& k : result.kernels) {
    if (k.name.empty()) return "a kernel without a name";
#define KEMIT_CHECK(field)                                                                                   \
  if (k.field < 0 || static_cast<std::uint64_t>(k.field) > limits::kMaxCount)                              \
    return "kernel " + k.name + " " #field " is " + std::to_string(k.field) + ", outside 0.." +             \
           std::to_string(limits::kMaxCount);
    KEMIT_LANE_KERNEL_FIELDS(KEMIT_CHECK)
#undef KEMIT_CHECK
    for (const IsaCounts* counts : {&k.isa.counts, &k.isa.loop_counts})
      for (const auto& [name, count] : *counts)
        if (name.empty() || count <= 0 || static_cast<std::uint64_t>(count) > limits::kMaxCount)
          return "kernel " + k.name + " ISA count '" + name + "' is " + std::to_string(count) + ", outside 1.." +
                 std::to_string(limits::kMaxCount);
    if (k.isa.llvm_occupancy < 0 || k.isa.llvm_occupancy > 64)
      return "kernel " + k.name + " llvm_occupancy is " + std::to_string(k.isa.llvm_occupancy);
  }
  if (!result.code_sha256.empty() && !is_digest(result.code_sha256)) return "code_sha256 is not a sha256";
  bool compiled = result.verdict == Verdict::LLVM_OK || result.verdict == Verdict::SPILL;
  if (!inputs.run_codegen) {
    if (!result.kernels.empty() || !result.code_sha256.empty()) return "kernel figures without codegen";
    if (result.verdict == Verdict::SPILL) return "SPILL without codegen";
  } else if (compiled) {
    if (result.kernels.empty()) return std::string(verdict_name(result.verdict)) + " with no kernel";
    if (result.code_sha256.empty()) return std::string(verdict_name(result.verdict)) + " with no code digest";
  }
  if (result.verdict == Verdict::SPILL && !inputs.module.expect_no_spill) return "SPILL without expect_no_spill";
  return "";
}

}  // namespace

lane_support::CacheInputs lane_cache_inputs(const VerdictInputs& inputs) {
  // Structured bindings name every member: a member added to one of these structs stops the
  // build here until it is named in the key (or said not to decide the answer).
  const auto& [module, flavor, run_codegen, codegen, toolchain, llvm_version] = inputs;
  const auto& [family, config, module_flavor, arch, text, expect_no_spill] = module;
  const auto& [flavor_name, major, datalayout, processors] = flavor;
  const auto& [checker, llc] = toolchain;
  lane_support::CacheInputs key;
  key.add("lane", kLaneCacheVersion);
  key.add("module.family", family).add("module.config", config).add("module.flavor", module_flavor);
  key.add("module.arch", arch).add("module.text", text).add("module.expect_no_spill", expect_no_spill);
  key.add("module.file_name", module_file_name(module));  // parse diagnostics name it
  key.add("flavor.name", flavor_name).add("flavor.major", major).add("flavor.datalayout", datalayout);
  key.add("flavor.processors", processors);
  key.add("run_codegen", run_codegen).add("codegen", codegen_name(codegen));
  key.add("checker.sha256", lane_support::file_sha256(checker));
  // llc runs only in step 5 with --codegen llc; in-process codegen never starts it.
  key.add("llc.sha256", run_codegen && codegen == Codegen::LLC ? lane_support::file_sha256(llc) : "");
  key.add("llvm_version", llvm_version);
  return key;
}

std::string lane_cache_key(const VerdictInputs& inputs) { return lane_cache_inputs(inputs).key(); }

std::string encode_lane_result(const LaneResult& result) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : result.kernels) {
    nlohmann::json kernel = {{"name", k.name}};
#define KEMIT_WRITE(field) kernel[#field] = k.field;
    KEMIT_LANE_KERNEL_FIELDS(KEMIT_WRITE)
#undef KEMIT_WRITE
    kernel["isa"] = {{"counts", k.isa.counts}, {"loop_counts", k.isa.loop_counts}, {"llvm_occupancy", k.isa.llvm_occupancy}};
    kernels.push_back(kernel);
  }
  return nlohmann::json{{"verdict", verdict_name(result.verdict)},
                        {"detail", result.detail},
                        {"kernels", kernels},
                        {"code_sha256", result.code_sha256}}
      .dump();
}

std::optional<LaneResult> decode_lane_result(const std::string& value, const VerdictInputs& inputs, std::string& why) {
  if (auto breach = limits::find_json_limit_breach(value)) {
    why = "its value breaks the input limits: " + breach->problem;
    return std::nullopt;
  }
  LaneResult result;
  try {
    nlohmann::json data = nlohmann::json::parse(value);
    std::optional<Verdict> verdict = verdict_named(data.at("verdict").get<std::string>());
    if (!verdict) {
      why = "its value is not a lane result: unknown verdict";
      return std::nullopt;
    }
    result.verdict = *verdict;
    result.detail = data.at("detail").get<std::string>();
    result.code_sha256 = data.at("code_sha256").get<std::string>();
    for (const auto& kernel : data.at("kernels")) {
      KernelResources k;
      k.name = kernel.at("name").get<std::string>();
#define KEMIT_READ(field)                                                                             \
  if (!kernel.at(#field).is_number_integer()) throw std::invalid_argument(#field " is not an integer"); \
  k.field = kernel.at(#field).get<int64_t>();
      KEMIT_LANE_KERNEL_FIELDS(KEMIT_READ)
#undef KEMIT_READ
      const auto& isa = kernel.at("isa");
      k.isa.counts = read_counts(isa.at("counts"));
      k.isa.loop_counts = read_counts(isa.at("loop_counts"));
      if (!isa.at("llvm_occupancy").is_number_integer()) throw std::invalid_argument("llvm_occupancy is not an integer");
      k.isa.llvm_occupancy = isa.at("llvm_occupancy").get<int64_t>();
      result.kernels.push_back(k);
    }
  } catch (const std::exception& error) {  // nlohmann's type and key errors, and the integer check
    why = std::string("its value is not a lane result: ") + error.what();
    return std::nullopt;
  }
  std::string problem = schema_problem(result, inputs);
  if (!problem.empty()) {
    why = "its value is not a result the lane computes: " + problem;
    return std::nullopt;
  }
  return result;
}

bool worth_caching(const LaneResult& result) {
  return result.verdict != Verdict::CRASH && result.verdict != Verdict::TOOLCHAIN_MISSING && !result.timed_out;
}

}  // namespace kemit::lane
