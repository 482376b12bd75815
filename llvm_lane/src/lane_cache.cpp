#include "lane_cache.h"

#include <nlohmann/json.hpp>

#include "checker_phase.h"
#include "kemit/lane_support/result_cache.h"

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
  X(private_segment_fixed_size) X(group_segment_fixed_size) X(wavefront_size) X(kernarg_segment_size)

}  // namespace

std::string lane_cache_key(const LaneModule& module, const LaneOptions& options, const std::string& llvm_version) {
  return kemit::lane_support::ResultCache::key(
      {kLaneCacheVersion, module.text, module_file_name(module), module.flavor, module.arch,
       module.expect_no_spill ? "expect_no_spill" : "spill allowed", options.run_codegen ? "codegen" : "no codegen",
       codegen_name(options.codegen), llvm_version});
}

std::string encode_lane_result(const LaneResult& result) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : result.kernels) {
    nlohmann::json kernel = {{"name", k.name}};
#define KEMIT_WRITE(field) kernel[#field] = k.field;
    KEMIT_LANE_KERNEL_FIELDS(KEMIT_WRITE)
#undef KEMIT_WRITE
    kernels.push_back(kernel);
  }
  return nlohmann::json{{"verdict", verdict_name(result.verdict)},
                        {"detail", result.detail},
                        {"kernels", kernels},
                        {"code_sha256", result.code_sha256}}
      .dump();
}

std::optional<LaneResult> decode_lane_result(const std::string& value) {
  try {
    nlohmann::json data = nlohmann::json::parse(value);
    std::optional<Verdict> verdict = verdict_named(data.at("verdict").get<std::string>());
    if (!verdict) return std::nullopt;
    LaneResult result;
    result.verdict = *verdict;
    result.detail = data.at("detail").get<std::string>();
    result.code_sha256 = data.at("code_sha256").get<std::string>();
    for (const auto& kernel : data.at("kernels")) {
      KernelResources k;
      k.name = kernel.at("name").get<std::string>();
#define KEMIT_READ(field) k.field = kernel.at(#field).get<int64_t>();
      KEMIT_LANE_KERNEL_FIELDS(KEMIT_READ)
#undef KEMIT_READ
      result.kernels.push_back(k);
    }
    return result;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

bool worth_caching(const LaneResult& result) {
  return result.verdict != Verdict::CRASH && result.verdict != Verdict::TOOLCHAIN_MISSING;
}

}  // namespace kemit::lane
