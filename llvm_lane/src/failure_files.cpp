#include "failure_files.h"

#include <filesystem>

#include "checker_phase.h"
#include "codegen.h"
#include "kemit/report/render.h"

namespace kemit::lane {
namespace {

std::string shell_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& word : words) out += (out.empty() ? "" : " ") + word;
  return out;
}

// The stock tool that shows this verdict (the checker is llvm-as's parse + verify;
// an unknown intrinsic shows in llvm-dis as a declaration without attributes).
std::string reproduce_command(const LaneModule& module, int major, const LaneResult& result, const std::string& path) {
  std::string bin = "/usr/lib/llvm-" + std::to_string(major) + "/bin/";
  switch (result.verdict) {
    case Verdict::PARSE_ERROR:
    case Verdict::VERIFY_ERROR:
    case Verdict::CRASH:
      return bin + "llvm-as " + path + " -o /dev/null";
    case Verdict::UNKNOWN_INTRINSIC:
      return bin + "llvm-as " + path + " -o - | " + bin + "llvm-dis | grep -B1 '^declare'";
    default:
      return shell_words(llc_command(bin + "llc", module.arch, path));
  }
}

}  // namespace

void write_failure_files(const std::vector<LaneModule>& modules, const std::vector<driver::FlavorFacts>& flavors,
                         const std::string& folder, std::vector<LaneResult>& results) {
  std::error_code error;
  for (size_t i = 0; i < modules.size(); ++i) {
    LaneResult& result = results[i];
    if (result.verdict == Verdict::LLVM_OK || result.verdict == Verdict::TOOLCHAIN_MISSING) continue;
    std::filesystem::create_directories(folder, error);
    std::string path = (std::filesystem::path(folder) / module_file_name(modules[i])).string();
    try {
      report::write_text_file(path, modules[i].text);  // a new file renamed into place: never through a link
    } catch (const std::exception&) {
      result.detail += "\n(could not write " + path + " to reproduce)";
      continue;
    }
    result.detail += "\nreproduce: " + reproduce_command(modules[i], flavor_facts(flavors, modules[i].flavor).major, result, path);
  }
}

}  // namespace kemit::lane
