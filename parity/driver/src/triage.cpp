// Cross-lowering triage of MISMATCH flavor sections (see triage.h and docs/driver.md).
#include "kemit/driver/triage.h"

namespace kemit::driver {
namespace {

bool emitted(const Answer& answer) {
  return answer.kind == AnswerKind::response && answer.response.is_object() &&
         answer.response.value("status", "") == "ok" && answer.response.contains("canonical") &&
         answer.response["canonical"].is_string() && answer.response.contains("ll") && answer.response["ll"].is_object();
}

std::string flavor_text(const nlohmann::json& response, const std::string& flavor) {
  const auto& ll = response["ll"];
  if (!ll.contains(flavor) || !ll[flavor].is_object() || !ll[flavor].contains("text")) return "";
  return ll[flavor]["text"].is_string() ? ll[flavor]["text"].get<std::string>() : "";
}

// How the prose names an engine: the two real engines by their language, any other by its label.
std::string prose_name(const std::string& engine) {
  if (engine == "py") return "Python";
  if (engine == "cpp") return "C++";
  return engine;
}

CrossLowering cross_lowering(const Answer& answer, const std::string& flavor) {
  if (answer.kind != AnswerKind::response) return {"", answer.detail};
  if (answer.response.value("status", "") != "ok") return {"", answer.response.value("error", answer.response.dump())};
  return {flavor_text(answer.response, flavor), ""};
}

}  // namespace

std::vector<TriageItem> triage_items(ConfigResult& config, const Answer& first, const Answer& second) {
  std::vector<TriageItem> items;
  if (!emitted(first) || !emitted(second)) return items;
  for (size_t s = 1; s < config.sections.size(); ++s) {
    if (config.sections[s].verdict != Verdict::mismatch) continue;
    TriageItem item;
    item.config = &config;
    item.section = s;
    item.flavor = config.sections[s].section;
    item.answers[0] = &first.response;
    item.answers[1] = &second.response;
    items.push_back(item);
  }
  return items;
}

std::string explain_drift(const TriageItem& item, const std::vector<std::string>& engines,
                          const CrossLowering& first_lowers_second, const CrossLowering& second_lowers_first) {
  const nlohmann::json &ref = *item.answers[0], &port = *item.answers[1];
  const std::string &ref_name = engines[0], &port_name = engines[1];
  std::string ref_prose = prose_name(ref_name), port_prose = prose_name(port_name);
  std::string ref_text = flavor_text(ref, item.flavor), port_text = flavor_text(port, item.flavor);
  std::string head = "triage: ";
  if (ref["canonical"] != port["canonical"])
    return head + "the builders diverged: the canonical texts differ (see the canonical section), so the LLVM "
                  "texts differ whatever the lowerers do";
  if (!first_lowers_second.problem.empty())
    return head + "the " + ref_prose + " worker could not lower the " + port_prose +
           " canonical text: " + first_lowers_second.problem;
  if (!second_lowers_first.problem.empty())
    return head + "the " + port_prose + " worker could not lower the " + ref_prose +
           " canonical text: " + second_lowers_first.problem;
  // The canonical texts are equal, so each lowerer's answer is a function of the canonical IR
  // exactly when it equals its engine's own emitted text.
  bool port_self = second_lowers_first.text == port_text;
  bool ref_self = first_lowers_second.text == ref_text;
  if (!port_self && second_lowers_first.text == ref_text)
    return head + "LOWERING_DRIFT(" + port_name + "): the " + port_prose + " lowerer turns the same canonical text "
           "into the " + ref_prose + " text, so the " + port_prose + " engine's emission depends on more than the "
           "canonical IR";
  if (!ref_self && first_lowers_second.text == port_text)
    return head + "LOWERING_DRIFT(" + ref_name + "): the " + ref_prose + " lowerer turns the same canonical text "
           "into the " + port_prose + " text, so the " + ref_prose + " engine's emission depends on more than the "
           "canonical IR";
  if (!ref_self)
    return head + "LOWERING_DRIFT(" + ref_name + "): the " + ref_prose + " lowerer's text for the parsed canonical "
           "IR differs from the " + ref_prose + " engine's own";
  if (!port_self)
    return head + "LOWERING_DRIFT(" + port_name + "): the " + port_prose + " lowerer's text for the parsed "
           "canonical IR differs from the " + port_prose + " engine's own";
  return head + "LOWERING_DRIFT(" + port_name + "): both lowerers are functions of the canonical IR and disagree "
         "on it; the " + port_prose + " lowerer lowered the " + ref_prose + " canonical text to the " + port_prose +
         " text and the " + ref_prose + " lowerer the " + port_prose + " text to the " + ref_prose + " text, so the "
         "port differs from the " + ref_prose + " reference lowerer (llvm/lower*.py <-> llvm/lower*.cpp)";
}

void triage_lowering(WorkerPool& pool, const std::vector<std::string>& engines, std::vector<TriageItem>& items) {
  if (items.empty() || engines.size() < 2) return;
  // The pool sends every request to every engine: request 2i carries the first engine's canonical
  // text, 2i+1 the second's, and each engine's answer to the other's text is the one read.
  std::vector<nlohmann::json> requests;
  for (const auto& item : items)
    for (const nlohmann::json* answer : item.answers)
      requests.push_back({{"op", "lower"}, {"canonical", (*answer)["canonical"]}, {"flavors", {item.flavor}}});
  std::vector<std::vector<Answer>> answers = pool.run(requests, nullptr);
  for (size_t i = 0; i < items.size(); ++i) {
    CrossLowering first_lowers_second = cross_lowering(answers[0][2 * i + 1], items[i].flavor);
    CrossLowering second_lowers_first = cross_lowering(answers[1][2 * i], items[i].flavor);
    SectionResult& section = items[i].config->sections[items[i].section];
    section.detail += (section.detail.empty() ? "" : "\n") +
                      explain_drift(items[i], engines, first_lowers_second, second_lowers_first);
  }
}

}  // namespace kemit::driver
