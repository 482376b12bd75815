// Cross-lowering triage of MISMATCH flavor sections (see triage.h and docs/driver.md).
#include "kemit/driver/triage.h"

#include "kemit/ir/parser.h"
#include "kemit/llvm/flavors.h"
#include "kemit/llvm/lower.h"

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

std::string lower_in_process(const std::string& canonical, const std::string& flavor) {
  std::vector<ir::Kernel> kernels = ir::parse_module(canonical);
  std::vector<std::reference_wrapper<const ir::Kernel>> refs(kernels.begin(), kernels.end());
  return llvm::lower_module(refs, llvm::find_flavor(flavor));
}

std::string explain_drift(const TriageItem& item, const std::string& cpp_lowers_py, const std::string& py_lowers_cpp,
                          const std::string& py_problem) {
  const nlohmann::json &py = *item.answers[0], &cpp = *item.answers[1];
  std::string py_text = flavor_text(py, item.flavor), cpp_text = flavor_text(cpp, item.flavor);
  std::string head = "triage: ";
  if (py["canonical"] != cpp["canonical"])
    return head + "the builders diverged: the canonical texts differ (see the canonical section), so the LLVM "
                  "texts differ whatever the lowerers do";
  if (!py_problem.empty()) return head + "the Python worker could not lower the C++ canonical text: " + py_problem;
  bool cpp_self = cpp_lowers_py == cpp_text;  // the C++ lowerer is a function of the canonical text
  bool py_self = py_lowers_cpp == py_text;
  if (!cpp_self && cpp_lowers_py == py_text)
    return head + "LOWERING_DRIFT(cpp): the C++ lowerer turns the same canonical text into the Python text, "
                  "so the C++ engine's emission depends on more than the canonical IR";
  if (!py_self && py_lowers_cpp == cpp_text)
    return head + "LOWERING_DRIFT(py): the Python lowerer turns the same canonical text into the C++ text, "
                  "so the Python engine's emission depends on more than the canonical IR";
  if (!py_self) return head + "LOWERING_DRIFT(py): the Python lowerer's text for the parsed canonical IR differs from "
                              "the Python engine's own";
  if (!cpp_self) return head + "LOWERING_DRIFT(cpp): the C++ lowerer's text for the parsed canonical IR differs from "
                               "the C++ engine's own";
  return head + "LOWERING_DRIFT(cpp): both lowerers are functions of the canonical IR and disagree on it; the C++ "
                "lowerer lowered the Python canonical text to the C++ text and the Python lowerer the C++ text to "
                "the Python text, so the port differs from the Python reference lowerer (llvm/lower*.py <-> "
                "llvm/lower*.cpp)";
}

void triage_lowering(WorkerPool& pool, const std::vector<std::string>& engines, std::vector<TriageItem>& items) {
  if (items.empty()) return;
  std::vector<nlohmann::json> requests;
  for (const auto& item : items)
    requests.push_back({{"op", "lower"}, {"canonical", (*item.answers[1])["canonical"]}, {"flavors", {item.flavor}}});
  std::vector<std::vector<Answer>> answers = pool.run(requests, nullptr);
  size_t py = engines.size() > 0 && engines[0] == "py" ? 0 : 1;
  for (size_t i = 0; i < items.size(); ++i) {
    const Answer& answer = answers[py][i];
    std::string problem, py_lowers_cpp;
    if (answer.kind != AnswerKind::response)
      problem = answer.detail;
    else if (answer.response.value("status", "") != "ok")
      problem = answer.response.value("error", answer.response.dump());
    else
      py_lowers_cpp = flavor_text(answer.response, items[i].flavor);
    std::string cpp_lowers_py;
    try {
      cpp_lowers_py = lower_in_process((*items[i].answers[0])["canonical"].get<std::string>(), items[i].flavor);
    } catch (const std::exception& error) {
      cpp_lowers_py = std::string("<the C++ parser refuses the Python canonical text: ") + error.what() + ">";
    }
    SectionResult& section = items[i].config->sections[items[i].section];
    section.detail += (section.detail.empty() ? "" : "\n") + explain_drift(items[i], cpp_lowers_py, py_lowers_cpp, problem);
  }
}

}  // namespace kemit::driver
