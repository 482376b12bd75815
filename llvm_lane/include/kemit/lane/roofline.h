// The static roofline of a config (docs/isa_profile.md, "Roofline"): the FLOPs and bytes its family
// says its spec moves (parity/intents/<family>.json "roofline"), against the published peaks of its
// processor (tables/arch_peaks.json). Information, never a verdict.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kemit::lane {

struct FamilyIntents;

// The family's expressions (RooflineSpec) over a config's spec.
struct RooflineSpec {
  std::string unit;       // what the figures count: "the whole problem", "one k step of one tile"
  std::string flops;      // expression: floating-point operations (an FMA is 2)
  std::string bytes;      // expression: bytes read from and written to memory
  std::string precision;  // a spec field naming the element type the arithmetic runs at, or a peak column
};

struct Roofline {
  std::string unit;
  double flops = 0, bytes = 0, intensity = 0;  // intensity: FLOP per byte
  std::string precision;                       // the peak column of tables/arch_peaks.json it runs at
  double peak_tflops = 0, memory_tb_s = 0;     // the processor's (0: not published)
  double ridge = 0;                            // peak / bandwidth, FLOP per byte (0: no peaks)
  std::string bound;                           // "compute", "memory", or "unknown: <why>"
  std::string product;                         // whose peaks these are
  int waves_per_simd = 0;                      // the lowest occupancy of the module's kernels
};

// The config's roofline on `arch`, or nullopt when its family states none. Throws
// std::runtime_error (a name neither the spec nor the defaults define) or muparser's error,
// naming the intents file.
std::optional<Roofline> roofline_of(const FamilyIntents& family, const nlohmann::json& spec, const std::string& arch);

// roofline_of for a family that states a roofline, with an expression that cannot be evaluated
// (a name the spec and the defaults do not define, muparser's error) turned into bound
// "unknown: <why>" naming the intents file: for the readers that show rooflines as information.
Roofline roofline_or_why(const FamilyIntents& family, const nlohmann::json& spec, const std::string& arch);

// "2.15 GFLOP / 1.34 GB = 1.6 FLOP/B, ridge 246.7 (Instinct MI300X f16): memory-bound"
std::string roofline_text(const Roofline& roofline);
nlohmann::json roofline_json(const Roofline& roofline);

}  // namespace kemit::lane
