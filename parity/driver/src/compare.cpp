// Verdicts per section, from two decoded answers (docs/protocol.md, "Verdicts").
#include "kemit/driver/compare.h"

#include "kemit/input_limits.h"

#include "decode_answer.h"
#include "kemit/driver/sha256.h"
#include "kemit/driver/text_diff.h"

namespace kemit::driver {
namespace {

using Kind = DecodedAnswer::Kind;

struct Judge {
  const ParityConfig& config;
  const CompareContext& context;
  std::vector<DecodedAnswer> sides;  // [0] and [1]

  const std::string& name(size_t side) const { return context.engine_names[side]; }

  SectionResult blank(const std::string& section) const {
    SectionResult result;
    result.section = section;
    result.sha256.assign(2, std::nullopt);
    result.refusal.assign(2, "");
    return result;
  }

  // Sets the section's repro: the two commands, as text and as argv.
  void set_repro(SectionResult& entry, const std::string& section) const {
    entry.repro = repro(section);
    for (size_t side = 0; side < 2; ++side)
      entry.repro_commands.push_back(
          repro_argv(name(side), context.locations, context.config_path, config.id, section));
  }

  std::string repro(const std::string& section) const {
    return "reproduce (from the source root):\n  " +
           repro_command(name(0), context.locations, context.config_path, config.id, section) + "\n  " +
           repro_command(name(1), context.locations, context.config_path, config.id, section);
  }

  std::vector<std::string> sections() const {
    std::vector<std::string> all = {"canonical"};
    all.insert(all.end(), context.flavors.begin(), context.flavors.end());
    return all;
  }
};

// Engine text echoed into a verdict's detail is cut at the echo limit (the cut says how much).
std::string json_quoted(std::string_view text) {
  return nlohmann::json(limits::cut_text(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A side failed (crash, timeout, error, malformed answer): every section carries it.
ConfigResult judge_failure(const Judge& judge, ConfigResult result) {
  Verdict verdict = Verdict::crash;
  std::string detail;
  for (size_t side = 0; side < 2; ++side) {
    if (judge.sides[side].kind != Kind::failed) continue;
    if (detail.empty()) verdict = judge.sides[side].failure;
    detail += (detail.empty() ? "" : "\n") + judge.name(side) + ": " + judge.sides[side].problem;
  }
  for (const auto& section : judge.sections()) {
    SectionResult entry = judge.blank(section);
    entry.verdict = verdict;
    entry.detail = detail;
    judge.set_repro(entry, section);
    result.sections.push_back(entry);
  }
  return result;
}

// At least one side refused the spec itself (validation): no section emits on that side.
ConfigResult judge_validation_refusal(const Judge& judge, ConfigResult result) {
  const DecodedAnswer &left = judge.sides[0], &right = judge.sides[1];
  Verdict verdict = Verdict::both_rejected;
  std::string detail;
  if (left.kind != right.kind) {
    size_t refusing = left.kind == Kind::rejected ? 0 : 1;
    verdict = Verdict::asymmetric;
    detail = judge.name(refusing) + " refuses the spec: " + json_quoted(judge.sides[refusing].reason) + "\n" +
             judge.name(1 - refusing) + " emits kernel " + json_quoted(judge.sides[1 - refusing].kernel_name);
  } else if (left.reason != right.reason) {
    verdict = Verdict::reason_differs;
    detail = "the refusal reasons differ:\n  " + judge.name(0) + ": " + json_quoted(left.reason) + "\n  " + judge.name(1) +
             ": " + json_quoted(right.reason);
  } else if (judge.config.expect == Expect::emit) {
    verdict = Verdict::expectation_failed;
    detail = "expect is \"emit\" but both engines refuse the spec: " + json_quoted(left.reason) +
             "\nfix the engines, or set expect to \"reject\" if the refusal is intended";
  }
  for (const auto& section : judge.sections()) {
    SectionResult entry = judge.blank(section);
    entry.verdict = verdict;
    for (size_t side = 0; side < 2; ++side) entry.refusal[side] = judge.sides[side].reason;
    if (verdict_fails(verdict)) {
      entry.detail = detail;
      judge.set_repro(entry, section);
    }
    result.sections.push_back(entry);
  }
  return result;
}

SectionResult compare_texts(const Judge& judge, const std::string& section, std::string_view left,
                            std::string_view right, std::string prefix) {
  SectionResult entry = judge.blank(section);
  bool equal = left == right;  // once: the texts are tens of kB
  if (judge.context.digests) {  // equal texts have one digest: hashing both costs a tenth of the driver's CPU
    std::string digest = sha256_hex(left);
    entry.sha256 = {digest, equal ? digest : sha256_hex(right)};
  }
  bool same = equal && prefix.empty();
  entry.verdict = same ? Verdict::identical : Verdict::mismatch;
  if (!equal)
    prefix += describe_text_difference(std::string(left), std::string(right), judge.name(0), judge.name(1));
  if (!same) {
    entry.detail = prefix;
    judge.set_repro(entry, section);
  }
  return entry;
}

SectionResult compare_canonical(const Judge& judge) {
  const DecodedAnswer &left = judge.sides[0], &right = judge.sides[1];
  std::string names;
  if (left.kernel_name != right.kernel_name)
    names = "kernel names differ: " + judge.name(0) + " " + json_quoted(left.kernel_name) + ", " + judge.name(1) + " " +
            json_quoted(right.kernel_name) + "\n";
  SectionResult entry = compare_texts(judge, "canonical", left.canonical, right.canonical, names);
  if (entry.verdict == Verdict::identical && judge.config.expect == Expect::reject) {
    entry.verdict = Verdict::expectation_failed;
    entry.detail = "expect is \"reject\" but both engines emit kernel " + json_quoted(left.kernel_name) +
                   "\nfix the engines' validation, or set expect to \"emit\" if emitting is intended";
    judge.set_repro(entry, "canonical");
  }
  return entry;
}

SectionResult compare_flavor(const Judge& judge, const std::string& flavor) {
  const DecodedSection& left = judge.sides[0].ll.at(flavor);
  const DecodedSection& right = judge.sides[1].ll.at(flavor);
  if (!left.rejected && !right.rejected) return compare_texts(judge, flavor, left.content, right.content, "");
  SectionResult entry = judge.blank(flavor);
  for (size_t side = 0; side < 2; ++side) {
    const DecodedSection& mine = side == 0 ? left : right;
    if (mine.rejected) entry.refusal[side] = mine.content;
    else if (judge.context.digests) entry.sha256[side] = sha256_hex(mine.content);
  }
  if (left.rejected && right.rejected && left.content == right.content) {
    entry.verdict = Verdict::both_rejected;
    entry.gate_refused = true;
    return entry;
  }
  if (left.rejected && right.rejected) {
    entry.verdict = Verdict::reason_differs;
    entry.detail = "the " + flavor + " gate reasons differ:\n  " + judge.name(0) + ": " + json_quoted(left.content) +
                   "\n  " + judge.name(1) + ": " + json_quoted(right.content);
  } else {
    size_t refusing = left.rejected ? 0 : 1;
    entry.verdict = Verdict::asymmetric;
    entry.detail = judge.name(refusing) + " refuses at the " + flavor + " gate: " +
                   json_quoted((refusing == 0 ? left : right).content) + "\n" + judge.name(1 - refusing) + " emits " +
                   std::to_string((refusing == 0 ? right : left).content.size()) + " bytes";
  }
  judge.set_repro(entry, flavor);
  return entry;
}

}  // namespace

nlohmann::json emit_request(const std::string& family, const ParityConfig& config,
                            const std::vector<std::string>& flavors) {
  return {{"op", "emit"},        {"family", family},   {"config", config.id},
          {"arch", config.arch}, {"spec", config.spec}, {"flavors", flavors}};
}

ConfigResult compare_config(const ParityConfig& config, const std::vector<Answer>& answers,
                            const CompareContext& context) {
  return compare_config(config, answers.at(0), answers.at(1), context);
}

ConfigResult compare_config(const ParityConfig& config, const Answer& left, const Answer& right,
                            const CompareContext& context) {
  Judge judge{config, context, {}};
  judge.sides.push_back(decode_answer(left, context.engine_names.at(0), context.flavors));
  judge.sides.push_back(decode_answer(right, context.engine_names.at(1), context.flavors));
  ConfigResult result;
  result.id = config.id;
  result.expect = config.expect;
  result.spec_digest = config.spec_digest;
  if (judge.sides[0].kind == Kind::failed || judge.sides[1].kind == Kind::failed)
    return judge_failure(judge, std::move(result));
  if (judge.sides[0].kind == Kind::rejected || judge.sides[1].kind == Kind::rejected)
    return judge_validation_refusal(judge, std::move(result));
  result.validated = true;
  result.sections.push_back(compare_canonical(judge));
  for (const auto& flavor : context.flavors) result.sections.push_back(compare_flavor(judge, flavor));
  return result;
}

}  // namespace kemit::driver
