// The families this engine knows, by name. Mirrors py_engine/kemit/families/registry.py.
#include "kemit/families/registry.h"

#include <algorithm>
#include <stdexcept>

#include "kemit/families/attention_fwd.h"
#include "kemit/families/conv_depthwise_dgrad_stream.h"
#include "kemit/families/conv_depthwise_tiled.h"
#include "kemit/families/conv_depthwise_wgrad.h"
#include "kemit/families/conv_fwd_lds_halo.h"
#include "kemit/families/elementwise.h"
#include "kemit/families/gemm_epilogue.h"
#include "kemit/families/gemm_mma.h"
#include "kemit/families/norm_rows.h"
#include "kemit/families/reduce_rows.h"
#include "kemit/families/scan_rows.h"
#include "kemit/families/softmax_rows.h"
#include "kemit/families/transpose_lds.h"

namespace kemit::families {

const std::vector<Family>& FAMILIES() {
  static const std::vector<Family> table = {
      {attention_fwd::FAMILY, attention_fwd::parse_spec, attention_fwd::kernel_name, attention_fwd::validate,
       attention_fwd::build, attention_fwd::flavor_gate},
      {conv_depthwise_dgrad_stream::FAMILY, conv_depthwise_dgrad_stream::parse_spec,
       conv_depthwise_dgrad_stream::kernel_name, conv_depthwise_dgrad_stream::validate,
       conv_depthwise_dgrad_stream::build},
      {conv_depthwise_tiled::FAMILY, conv_depthwise_tiled::parse_spec, conv_depthwise_tiled::kernel_name,
       conv_depthwise_tiled::validate, conv_depthwise_tiled::build},
      {conv_depthwise_wgrad::FAMILY, conv_depthwise_wgrad::parse_spec, conv_depthwise_wgrad::kernel_name,
       conv_depthwise_wgrad::validate, conv_depthwise_wgrad::build, nullptr, conv_depthwise_wgrad::build_module,
       conv_depthwise_wgrad::plan_module},
      {conv_fwd_lds_halo::FAMILY, conv_fwd_lds_halo::parse_spec, conv_fwd_lds_halo::kernel_name,
       conv_fwd_lds_halo::validate,
       [](const nlohmann::json& spec, const target::Arch& arch) { return conv_fwd_lds_halo::build(spec, arch); },
       conv_fwd_lds_halo::flavor_gate,
       [](const nlohmann::json& spec, const target::Arch& arch) { return conv_fwd_lds_halo::build_module(spec, arch); },
       conv_fwd_lds_halo::plan_module},
      {elementwise::FAMILY, elementwise::parse_spec, elementwise::kernel_name, elementwise::validate,
       elementwise::build},
      {gemm_epilogue::FAMILY, gemm_epilogue::parse_spec, gemm_epilogue::kernel_name, gemm_epilogue::validate,
       gemm_epilogue::build, gemm_epilogue::flavor_gate},
      {gemm_mma::FAMILY, gemm_mma::parse_spec, gemm_mma::kernel_name, gemm_mma::validate, gemm_mma::build,
       gemm_mma::flavor_gate},
      {norm_rows::FAMILY, norm_rows::parse_spec, norm_rows::kernel_name, norm_rows::validate, norm_rows::build},
      {reduce_rows::FAMILY, reduce_rows::parse_spec, reduce_rows::kernel_name, reduce_rows::validate,
       reduce_rows::build},
      {scan_rows::FAMILY, scan_rows::parse_spec, scan_rows::kernel_name, scan_rows::validate, scan_rows::build,
       nullptr, scan_rows::build_module, scan_rows::plan_module},
      {softmax_rows::FAMILY, softmax_rows::parse_spec, softmax_rows::kernel_name, softmax_rows::validate,
       softmax_rows::build},
      {transpose_lds::FAMILY, transpose_lds::parse_spec, transpose_lds::kernel_name, transpose_lds::validate,
       transpose_lds::build},
  };
  return table;
}

std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const auto& family : FAMILIES()) names.push_back(family.FAMILY);
  std::sort(names.begin(), names.end());
  return names;
}

const Family& find_family(std::string_view name) {
  for (const auto& family : FAMILIES())
    if (family.FAMILY == name) return family;
  std::string known;
  for (const auto& family : family_names()) known += (known.empty() ? "" : ", ") + family;
  throw std::invalid_argument("unknown family '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace kemit::families
