// The static roofline of a config (kemit/lane/roofline.h).
#include "kemit/lane/roofline.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>

#include <muParser.h>

#include "kemit/lane/family_intents.h"
#include "kemit_arch_peaks_table.h"
#include "spec_expressions.h"

namespace kemit::lane {
namespace {

// tables/arch_peaks.json, compiled in: each processor's row by name.
const std::map<std::string, nlohmann::json>& peak_rows() {
  static const std::map<std::string, nlohmann::json> rows = [] {
    std::map<std::string, nlohmann::json> out;
    const nlohmann::json table = nlohmann::json::parse(kArchPeaksTableJson);  // outlives the loop
    for (const auto& row : table.at("rows")) out[row.at("name").get<std::string>()] = row;
    return out;
  }();
  return rows;
}

double figure(const nlohmann::json& row, const std::string& column) {
  auto found = row.find(column);
  return found != row.end() && found->is_number() ? found->get<double>() : 0.0;
}

// The peak column an element type runs at: its own name, or `fp8` for the 8-bit floats.
std::string peak_column(const std::string& type) {
  static const std::map<std::string, std::string> eight_bit = {
      {"fp8", "fp8"}, {"bf8", "fp8"}, {"f8", "fp8"}, {"e4m3", "fp8"}, {"e5m2", "fp8"}};
  auto found = eight_bit.find(type);
  return found == eight_bit.end() ? type : found->second;
}

double evaluated(const FamilyIntents& family, const std::string& expression, const nlohmann::json& spec,
                 const std::string& what) {
  std::vector<std::pair<std::string, double>> used;
  auto value_of = [&](const std::string& name) { return spec_value(spec, family.defaults, name); };
  return evaluate(expression, value_of, family.file + ": roofline " + what, used);
}

void place(Roofline& r, const std::string& arch) {
  auto row = peak_rows().find(arch);
  if (row == peak_rows().end()) {
    r.bound = "unknown: " + arch + " has no row in tables/arch_peaks.json";
    return;
  }
  r.product = row->second.value("product", "");
  r.peak_tflops = figure(row->second, r.precision);
  r.memory_tb_s = figure(row->second, "memory_tb_s");
  if (r.peak_tflops <= 0 || r.memory_tb_s <= 0) {
    r.bound = "unknown: no published " + r.precision + " peak and bandwidth for " + arch + " (tables/arch_peaks.json)";
    return;
  }
  r.ridge = r.peak_tflops / r.memory_tb_s;  // TFLOP/s over TB/s: FLOP per byte
  r.bound = r.intensity >= r.ridge ? "compute" : "memory";
}

std::string scaled(double value, const char* unit) {
  static const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int step = 0;
  while (value >= 1000 && step < 5) value /= 1000, ++step;
  char text[48];
  std::snprintf(text, sizeof text, "%.3g %s%s", value, prefixes[step], unit);
  return text;
}

// A roofline whose figures could not be evaluated: only its unit and why.
Roofline unknown_roofline(const FamilyIntents& family, std::string why) {
  Roofline roofline;
  roofline.unit = family.roofline->unit;
  roofline.bound = std::move(why);
  return roofline;
}

}  // namespace

std::optional<Roofline> roofline_of(const FamilyIntents& family, const nlohmann::json& spec, const std::string& arch) {
  if (!family.roofline) return std::nullopt;
  const RooflineSpec& s = *family.roofline;
  Roofline r;
  r.unit = s.unit;
  r.flops = evaluated(family, s.flops, spec, "flops");
  r.bytes = evaluated(family, s.bytes, spec, "bytes");
  r.intensity = r.bytes > 0 ? r.flops / r.bytes : 0;
  std::string type = spec_text(spec, family.defaults, s.precision);
  r.precision = peak_column(type.empty() ? s.precision : type);
  place(r, arch);
  return r;
}

Roofline roofline_or_why(const FamilyIntents& family, const nlohmann::json& spec, const std::string& arch) {
  try {
    return *roofline_of(family, spec, arch);
  } catch (const std::runtime_error& error) {  // a name the spec and the defaults do not define
    return unknown_roofline(family, std::string("unknown: ") + error.what());
  } catch (const mu::Parser::exception_type& error) {
    return unknown_roofline(family, "unknown: " + family.file + ": roofline cannot be evaluated: " + error.GetMsg());
  }
}

std::string roofline_text(const Roofline& r) {
  char intensity[64];
  std::snprintf(intensity, sizeof intensity, "%.3g FLOP/B", r.intensity);
  std::string text = scaled(r.flops, "FLOP") + " / " + scaled(r.bytes, "B") + " (" + r.unit + ") = " + intensity;
  if (r.ridge > 0) {
    char ridge[96];
    std::snprintf(ridge, sizeof ridge, ", ridge %.3g (%s %s: %.4g TFLOP/s, %.3g TB/s)", r.ridge, r.product.c_str(),
                  r.precision.c_str(), r.peak_tflops, r.memory_tb_s);
    text += ridge;
  }
  text += ": " + (r.bound == "compute" || r.bound == "memory" ? r.bound + "-bound" : r.bound);
  // 0: no occupancy known (a processor without occupancy rules, a shard blessed without the lane).
  return text + ", waves/SIMD " + (r.waves_per_simd > 0 ? std::to_string(r.waves_per_simd) : "not measured");
}

nlohmann::json roofline_json(const Roofline& r) {
  return {{"unit", r.unit},         {"flops", r.flops},       {"bytes", r.bytes},
          {"intensity", r.intensity}, {"precision", r.precision}, {"product", r.product},
          {"peak_tflops", r.peak_tflops}, {"memory_tb_s", r.memory_tb_s}, {"ridge", r.ridge},
          {"bound", r.bound},       {"waves_per_simd", r.waves_per_simd}};
}

}  // namespace kemit::lane
