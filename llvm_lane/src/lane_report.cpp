#include <algorithm>
#include <iomanip>
#include <map>
#include <tuple>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "kemit/lane/report.h"
#include "kemit/report/render.h"

namespace kemit::lane {
namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

nlohmann::json kernel_json(const KernelResources& kernel) {
  return {{"name", kernel.name},
          {"vgpr_count", kernel.vgpr_count},
          {"agpr_count", kernel.agpr_count},
          {"sgpr_count", kernel.sgpr_count},
          {"vgpr_spill_count", kernel.vgpr_spill_count},
          {"sgpr_spill_count", kernel.sgpr_spill_count},
          {"private_segment_fixed_size", kernel.private_segment_fixed_size},
          {"group_segment_fixed_size", kernel.group_segment_fixed_size},
          {"wavefront_size", kernel.wavefront_size},
          {"kernarg_segment_size", kernel.kernarg_segment_size},
          {"max_flat_workgroup_size", kernel.max_flat_workgroup_size},
          {"isa", {{"waves_per_simd", kernel.isa.waves_per_simd},
                   {"occupancy_limit", kernel.isa.occupancy_limit},
                   {"llvm_occupancy", kernel.isa.llvm_occupancy},
                   {"counts", kernel.isa.counts},
                   {"loop_counts", kernel.isa.loop_counts}}}};
}

void print_failures(std::ostream& out, const LaneReport& report) {
  bool header = false;
  for (const auto& entry : report.entries) {
    if (!entry.failed) continue;
    if (!header) out << "\nfailures (family, config, flavor, arch, verdict, first diagnostic):\n";
    header = true;
    out << "  " << entry.family << " " << entry.config << " " << entry.flavor << " " << entry.arch << " "
        << entry.outcome << ": " << first_line(entry.detail) << "\n";
    size_t rest = entry.detail.find('\n');
    if (rest != std::string::npos && entry.detail.find("reproduce: ", rest) != std::string::npos)
      out << "      " << entry.detail.substr(entry.detail.find("reproduce: ", rest)) << "\n";
  }
}

std::string config_list(const std::vector<int>& configs) {
  std::string text;
  for (int config : configs) text += (text.empty() ? "" : ", ") + std::to_string(config);
  return text;
}

void print_twins(std::ostream& out, const LaneReport& report) {
  std::vector<Twin> twins = report.twins();
  if (twins.empty()) return;
  out << "\ncompiled twins (information: the same code at one flavor and processor, so all but one config is "
         "redundant):\n";
  for (const auto& twin : twins)
    out << "  TWIN " << twin.family << " configs " << config_list(twin.configs) << " at " << twin.flavor << "/"
        << twin.arch << ": code " << twin.code_sha256.substr(0, 12) << "\n";
}

void print_resources(std::ostream& out, const LaneReport& report) {
  out << "\nresources (VGPR includes AGPR on gfx9; AGPR, SGPR, spills v/s, scratch, LDS, wave, kernarg, occupancy):\n";
  for (const auto& entry : report.entries)
    for (const auto& k : entry.kernels)
      out << "  " << std::left << std::setw(14) << entry.family << " " << std::setw(5) << entry.config << " "
          << std::setw(7) << entry.flavor << " " << std::setw(8) << entry.arch << " " << std::setw(28) << k.name
          << std::right << " v"
          << k.vgpr_count << " a" << k.agpr_count << " s" << k.sgpr_count << " spill " << k.vgpr_spill_count << "/"
          << k.sgpr_spill_count << " scratch " << k.private_segment_fixed_size << " lds "
          << k.group_segment_fixed_size << " w" << k.wavefront_size << " kernarg " << k.kernarg_segment_size
          << " waves/SIMD " << k.isa.waves_per_simd << " (" << k.isa.occupancy_limit << ")\n";
  out << "\nstatic roofline (information; docs/isa_profile.md, \"Roofline\"):\n";
  for (const auto& entry : report.entries)
    if (entry.roofline)
      out << "  " << std::left << std::setw(14) << entry.family << " " << std::setw(5) << entry.config << " "
          << std::setw(7) << entry.flavor << " " << std::setw(8) << entry.arch << std::right << " "
          << roofline_text(*entry.roofline) << "\n";
}

}  // namespace

ReportEntry entry_for(const LaneModule& module, const LaneResult& result) {
  ReportEntry entry;
  entry.family = module.family;
  entry.config = module.config;
  entry.flavor = module.flavor;
  entry.arch = module.arch;
  entry.outcome = verdict_name(result.verdict);
  entry.detail = result.detail;
  entry.kernels = result.kernels;
  entry.code_sha256 = result.code_sha256;
  entry.roofline = result.roofline;
  entry.seconds = result.compile_ms / 1000.0;
  entry.failed = result.verdict != Verdict::LLVM_OK;
  return entry;
}

report::Evidence SummaryRow::evidence() const {
  report::Evidence e;
  e.passed = ok;
  e.failed = failed;
  e.not_applicable = not_applicable;
  return e;
}

std::string SummaryRow::status() const { return report::status_name(report::row_status(evidence(), sharded)); }

std::vector<SummaryRow> LaneReport::summary() const {
  std::map<std::pair<std::string, std::string>, SummaryRow> rows;
  for (const auto& entry : entries) {
    SummaryRow& row = rows[{entry.family, entry.flavor}];
    row.family = entry.family;
    row.flavor = entry.flavor;
    row.sharded = sharded;
    if (entry.outcome == "NOT_APPLICABLE") {
      ++row.not_applicable;
      continue;
    }
    if (entry.outcome != "EMIT_REFUSED" && entry.outcome != "EMIT_ERROR") ++row.checked;
    if (entry.failed) ++row.failed;
    else ++row.ok;
  }
  std::vector<SummaryRow> out;
  for (auto& item : rows) out.push_back(item.second);
  return out;
}

std::vector<Twin> LaneReport::twins() const {
  std::map<std::tuple<std::string, std::string, std::string, std::string>, Twin> groups;
  for (const auto& entry : entries) {
    if (entry.code_sha256.empty()) continue;
    Twin& twin = groups[{entry.family, entry.flavor, entry.arch, entry.code_sha256}];
    twin = Twin{entry.family, entry.flavor, entry.arch, twin.configs, entry.code_sha256};
    twin.configs.push_back(entry.config);
  }
  std::vector<Twin> out;
  for (auto& item : groups)
    if (item.second.configs.size() > 1) {
      std::sort(item.second.configs.begin(), item.second.configs.end());
      out.push_back(item.second);
    }
  std::sort(out.begin(), out.end(), [](const Twin& a, const Twin& b) {
    return std::tie(a.family, a.flavor, a.arch, a.configs) < std::tie(b.family, b.flavor, b.arch, b.configs);
  });
  return out;
}

bool LaneReport::green() const { return lane_summary(*this, report::RunInfo{}).green(); }

report::Report lane_summary(const LaneReport& lane, const report::RunInfo& info) {
  report::Report out;
  out.lane = "llvm";
  out.run = info;
  if (lane.sharded && !out.run.shard) out.run.shard = report::Shard{};  // judged as a shard's rows
  for (const auto& row : lane.summary()) out.rows.push_back({row.family, row.flavor, row.evidence(), {}, ""});
  for (const auto& entry : lane.entries) {
    report::Case c{entry.family, entry.config, entry.flavor, entry.outcome, report::Outcome::passed, "", "",
                   entry.seconds};
    if (entry.outcome == "NOT_APPLICABLE") {
      c.outcome = report::Outcome::skipped;
      c.message = "NOT_APPLICABLE: " + first_line(entry.detail);
    } else if (entry.failed) {
      c.outcome = report::Outcome::failed;
      c.message = report::failure_message(entry.outcome, entry.detail);
      c.detail = entry.arch + ": " + entry.detail;
    }
    out.cases.push_back(std::move(c));
  }
  out.run_failures = lane.unchecked;
  report::judge_rows(out);
  return out;
}

void print_text_report(std::ostream& out, const LaneReport& report, bool with_resources) {
  for (const auto& row : report.summary())
    out << std::left << std::setw(20) << row.family << " " << std::setw(8) << row.flavor << " checked " << std::setw(4)
        << row.checked << " ok " << std::setw(4) << row.ok << " failed " << std::setw(4) << row.failed << " n/a "
        << std::setw(4) << row.not_applicable << " " << row.status() << std::right << "\n";
  for (const auto& line : report.unchecked) out << "UNCHECKED: " << line << "\n";
  print_failures(out, report);
  print_twins(out, report);
  if (with_resources) print_resources(out, report);
  for (const auto& note : report.notes) out << note << "\n";
  out << "RESULT: " << (report.green() ? "GREEN" : "RED") << "\n";
}

void write_json_report(const std::string& path, const LaneReport& report, const report::RunInfo& info) {
  nlohmann::json summary = nlohmann::json::array(), modules = nlohmann::json::array();
  for (const auto& row : report.summary())
    summary.push_back({{"family", row.family}, {"flavor", row.flavor}, {"checked", row.checked}, {"ok", row.ok},
                       {"failed", row.failed}, {"not_applicable", row.not_applicable}, {"status", row.status()}});
  for (const auto& entry : report.entries) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& kernel : entry.kernels) kernels.push_back(kernel_json(kernel));
    modules.push_back({{"family", entry.family}, {"config", entry.config}, {"flavor", entry.flavor},
                       {"arch", entry.arch}, {"verdict", entry.outcome}, {"failed", entry.failed},
                       {"detail", entry.detail}, {"kernels", kernels}, {"code_sha256", entry.code_sha256},
                       {"seconds", entry.seconds}});
    if (entry.roofline) modules.back()["roofline"] = roofline_json(*entry.roofline);
  }
  nlohmann::json twins = nlohmann::json::array();
  for (const auto& twin : report.twins())
    twins.push_back({{"family", twin.family}, {"flavor", twin.flavor}, {"arch", twin.arch},
                     {"configs", twin.configs}, {"code_sha256", twin.code_sha256}});
  nlohmann::json document = {{"result", report.green() ? "GREEN" : "RED"},
                             {"unchecked", report.unchecked},
                             {"summary_rows", summary},
                             {"modules", modules},
                             {"twins", twins}};
  report::write_json_report(path, document, lane_summary(report, info));
}

void write_junit_report(const std::string& path, const LaneReport& report, const report::RunInfo& info) {
  report::write_report_file(path, report::junit_xml(lane_summary(report, info)));
}

}  // namespace kemit::lane
