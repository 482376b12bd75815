// The lane's entries in the result cache: every key, derived here and nowhere else, and the
// values stored under them, decoded strictly (a value no decoder takes is rejected and recomputed).
#include <algorithm>

#include "kemit/input_limits.h"
#include "kemit/lane_support/source_digest.h"
#include "numerics_lane.h"

namespace kemit::numerics {

// Bump when the lane's C++ side changes a verdict or a detail (the Python side is in every key
// by its digest).
constexpr const char* kLaneVersion = "numerics 6";
const std::vector<std::string> kVerdicts{"NUMERIC_OK",       "NUMERIC_MISMATCH", "NUMERIC_DIVERGED", "NUMERIC_RACE",
                                         "NUMERIC_SCHEDULE", "NOT_EXECUTABLE"};

// Every key of the lane, derived here and nowhere else.
// - kPlan: the config's plan: what the numerics worker's `plan` answers from (the lane's Python
//   sources, the family, the config id (the seed), the processor's facts, the spec with the
//   engine's defaults).
// - kEmit: the engine's answer for the small spec: the engine binary (kemit_emit reads no file,
//   its tables are compiled in), the request (small spec, lowered buffer range, the sections).
// - a section: that section's verdict: the plan's inputs, the small spec, the sha256 of the text
//   that runs, the engine's launch plan and the section's runner (interpreter or executor binary).
std::string cache_key(const LaneFacts& lane, const Item& item, const std::string& section) {
  std::string kind = section == kPlan ? "plan" : section == kEmit ? "emit" : "run";
  kemit::lane_support::CacheInputs inputs;
  inputs.add("lane", kLaneVersion)
      .add("kind", kind)
      .add("python sources", lane.python_digest)
      .add("family", item.family)
      .add("config", item.id)
      .add("arch", item.arch)
      .add("wave size", item.facts ? item.facts->wave_size : 0)
      .add("fp8 format", item.facts ? item.facts->fp8_format : "")
      .add("spec", item.spec_full.dump());
  if (kind == "emit") {
    inputs.add("engine", lane.engine_digest)
        .add("spec run", item.spec_run.dump())
        .add("buffer range", item.buffer_range.dump())
        .add("sections", lane.sections);
  } else if (kind == "run") {
    auto text = std::find_if(item.digests.begin(), item.digests.end(), [&](const auto& t) { return t.first == section; });
    inputs.add("section", section)
        .add("runner", lane.runners.at(section))
        .add("spec run", item.spec_run.dump())
        .add("buffer range", item.buffer_range.dump())
        .add("launch plan", item.launch_plan)
        .add("text sha256", text == item.digests.end() ? "" : text->second);
  }
  return inputs.key();
}

// A stored value as JSON, or a discarded value (which no decoder takes, so the entry is rejected)
// when it is not JSON or passes the input limits (a value nested 100,000 deep is refused before
// it is parsed).
json parse_stored(const std::string& text) {
  try {
    kemit::limits::check_json_limits(text, "a cache entry");
  } catch (const std::exception&) {
    return json::value_t::discarded;
  }
  return json::parse(text, nullptr, false);
}

namespace {

// A stored or answered refusal ({"refused": text}) stops the config: true when `value` is one,
// false (with `valid` false for a refusal that is not text) otherwise.
bool take_refusal(const json& value, Item& item, bool& valid) {
  valid = value.is_object() && (!value.contains("refused") || value["refused"].is_string());
  if (!valid || !value.contains("refused")) return false;
  item.stop(value["refused"].get<std::string>());
  return true;
}

}  // namespace

bool decode_plan(const json& value, Item& item) {
  bool valid = false;
  if (take_refusal(value, item, valid) || !valid) return valid;
  if (!value.contains("spec_run") || !value["spec_run"].is_object()) return false;
  json range = value.value("buffer_range", json());
  if (!range.is_null() && !range.is_number_unsigned()) return false;
  item.spec_run = value["spec_run"];
  item.buffer_range = range;
  return true;
}

// What a memo of the engine's answer holds: the refusal, or the launch plan and the texts' digests.
json emit_memo(const Item& item) {
  if (item.stopped) return {{"refused", item.results.at(0).detail}};
  json digests = json::array();
  for (const auto& [section, digest] : item.digests) digests.push_back({section, digest});
  return {{"launch_plan", item.launch_plan}, {"digests", digests}};
}

bool take_emit_memo(const json& value, Item& item) {
  bool valid = false;
  if (take_refusal(value, item, valid) || !valid) return valid;
  if (!value.contains("launch_plan") || !value["launch_plan"].is_string() || !value.contains("digests") ||
      !value["digests"].is_array())
    return false;
  std::vector<std::pair<std::string, std::string>> digests;
  for (const auto& pair : value["digests"]) {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string()) return false;
    digests.push_back({pair[0].get<std::string>(), pair[1].get<std::string>()});
  }
  item.launch_plan = value["launch_plan"].get<std::string>();
  item.digests = digests;
  return true;
}

json encode_result(const SectionResult& r) {
  return {{"section", r.section},           {"verdict", r.verdict},         {"detail", r.detail},
          {"mismatch", r.mismatch},         {"lane_instructions", r.lane_instructions},
          {"run_seconds", r.run_seconds},   {"outputs_sha256", r.outputs_sha256},
          {"same_program_as", r.same_program_as}};
}

std::optional<SectionResult> decode_result(const json& value, const std::string& section) {
  try {
    SectionResult r;
    r.section = value.at("section").get<std::string>();
    r.verdict = value.at("verdict").get<std::string>();
    r.detail = value.at("detail").get<std::string>();
    r.mismatch = value.at("mismatch");
    r.lane_instructions = value.at("lane_instructions").get<long long>();
    r.run_seconds = value.at("run_seconds").get<double>();
    if (value.contains("outputs_sha256")) r.outputs_sha256 = value.at("outputs_sha256").get<std::string>();
    if (value.contains("same_program_as")) r.same_program_as = value.at("same_program_as").get<std::string>();
    if (r.verdict == "NUMERIC_DIVERGED") return std::nullopt;  // a judgement across sections, never one section's
    bool known = std::find(kVerdicts.begin(), kVerdicts.end(), r.verdict) != kVerdicts.end();
    if (r.section != section || !known || r.lane_instructions < 0 || r.run_seconds < 0) return std::nullopt;
    // A run is shared only when it passed, and only from another flavor.
    if (r.same_program_as == section || (!r.same_program_as.empty() && r.verdict != "NUMERIC_OK")) return std::nullopt;
    if (!(r.mismatch.is_null() || r.mismatch.is_object())) return std::nullopt;
    return r;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

}  // namespace kemit::numerics
