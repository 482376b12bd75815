// The families this engine knows, by name. Mirrors py_engine/kemit/families/registry.py.
#include "kemit/families/registry.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

namespace {

// A family's entry point on its typed Spec as the row's pointer on the parsed spec: each call reads
// the parsed spec once (read) and passes the typed Spec on, with the entry point's other arguments.
template <auto read, auto entry>
constexpr auto on_spec = [](const nlohmann::json& spec, auto... rest) { return entry(read(spec), rest...); };

}  // namespace

const std::vector<Family>& FAMILIES() {
  static const std::vector<Family> table = {
      {attention_fwd::FAMILY, attention_fwd::parse_spec, on_spec<attention_fwd::read_spec, attention_fwd::kernel_name>,
       on_spec<attention_fwd::read_spec, attention_fwd::validate>,
       on_spec<attention_fwd::read_spec, attention_fwd::build>,
       on_spec<attention_fwd::read_spec, attention_fwd::flavor_gate>},
      {conv_depthwise_dgrad_stream::FAMILY, conv_depthwise_dgrad_stream::parse_spec,
       on_spec<conv_depthwise_dgrad_stream::read_spec, conv_depthwise_dgrad_stream::kernel_name>,
       on_spec<conv_depthwise_dgrad_stream::read_spec, conv_depthwise_dgrad_stream::validate>,
       on_spec<conv_depthwise_dgrad_stream::read_spec, conv_depthwise_dgrad_stream::build>},
      {conv_depthwise_tiled::FAMILY, conv_depthwise_tiled::parse_spec,
       on_spec<conv_depthwise_tiled::read_spec, conv_depthwise_tiled::kernel_name>,
       on_spec<conv_depthwise_tiled::read_spec, conv_depthwise_tiled::validate>,
       on_spec<conv_depthwise_tiled::read_spec, conv_depthwise_tiled::build>},
      {conv_depthwise_wgrad::FAMILY, conv_depthwise_wgrad::parse_spec,
       on_spec<conv_depthwise_wgrad::read_spec, conv_depthwise_wgrad::kernel_name>,
       on_spec<conv_depthwise_wgrad::read_spec, conv_depthwise_wgrad::validate>,
       on_spec<conv_depthwise_wgrad::read_spec, conv_depthwise_wgrad::build>, nullptr,
       on_spec<conv_depthwise_wgrad::read_spec, conv_depthwise_wgrad::build_module>,
       on_spec<conv_depthwise_wgrad::read_spec, conv_depthwise_wgrad::plan_module>},
      {conv_fwd_lds_halo::FAMILY, conv_fwd_lds_halo::parse_spec,
       on_spec<conv_fwd_lds_halo::read_spec, conv_fwd_lds_halo::kernel_name>,
       on_spec<conv_fwd_lds_halo::read_spec, conv_fwd_lds_halo::validate>,
       [](const nlohmann::json& spec, const target::Arch& arch) {
         return conv_fwd_lds_halo::build(conv_fwd_lds_halo::read_spec(spec), arch);
       },
       on_spec<conv_fwd_lds_halo::read_spec, conv_fwd_lds_halo::flavor_gate>,
       [](const nlohmann::json& spec, const target::Arch& arch) {
         return conv_fwd_lds_halo::build_module(conv_fwd_lds_halo::read_spec(spec), arch);
       },
       on_spec<conv_fwd_lds_halo::read_spec, conv_fwd_lds_halo::plan_module>},
      {elementwise::FAMILY, elementwise::parse_spec, on_spec<elementwise::read_spec, elementwise::kernel_name>,
       on_spec<elementwise::read_spec, elementwise::validate>, on_spec<elementwise::read_spec, elementwise::build>},
      {gemm_epilogue::FAMILY, gemm_epilogue::parse_spec, on_spec<gemm_epilogue::read_spec, gemm_epilogue::kernel_name>,
       on_spec<gemm_epilogue::read_spec, gemm_epilogue::validate>,
       on_spec<gemm_epilogue::read_spec, gemm_epilogue::build>,
       on_spec<gemm_epilogue::read_spec, gemm_epilogue::flavor_gate>},
      {gemm_mma::FAMILY, gemm_mma::parse_spec, on_spec<gemm_mma::read_spec, gemm_mma::kernel_name>,
       on_spec<gemm_mma::read_spec, gemm_mma::validate>, on_spec<gemm_mma::read_spec, gemm_mma::build>,
       on_spec<gemm_mma::read_spec, gemm_mma::flavor_gate>},
      {norm_rows::FAMILY, norm_rows::parse_spec, on_spec<norm_rows::read_spec, norm_rows::kernel_name>,
       on_spec<norm_rows::read_spec, norm_rows::validate>, on_spec<norm_rows::read_spec, norm_rows::build>},
      {reduce_rows::FAMILY, reduce_rows::parse_spec, on_spec<reduce_rows::read_spec, reduce_rows::kernel_name>,
       on_spec<reduce_rows::read_spec, reduce_rows::validate>, on_spec<reduce_rows::read_spec, reduce_rows::build>},
      {scan_rows::FAMILY, scan_rows::parse_spec, on_spec<scan_rows::read_spec, scan_rows::kernel_name>,
       on_spec<scan_rows::read_spec, scan_rows::validate>, on_spec<scan_rows::read_spec, scan_rows::build>, nullptr,
       on_spec<scan_rows::read_spec, scan_rows::build_module>, on_spec<scan_rows::read_spec, scan_rows::plan_module>},
      {softmax_rows::FAMILY, softmax_rows::parse_spec, on_spec<softmax_rows::read_spec, softmax_rows::kernel_name>,
       on_spec<softmax_rows::read_spec, softmax_rows::validate>, on_spec<softmax_rows::read_spec, softmax_rows::build>},
      {transpose_lds::FAMILY, transpose_lds::parse_spec, on_spec<transpose_lds::read_spec, transpose_lds::kernel_name>,
       on_spec<transpose_lds::read_spec, transpose_lds::validate>,
       on_spec<transpose_lds::read_spec, transpose_lds::build>},
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
  throw std::invalid_argument(fmt::format("unknown family '{name}' (known: {known})", fmt::arg("name", name),
                                          fmt::arg("known", fmt::join(family_names(), ", "))));
}

}  // namespace kemit::families
