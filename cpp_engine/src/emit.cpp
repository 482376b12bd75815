// `kemit_emit`: print one config's IR, or serve the engine protocol (--serve).
// Mirrors py_engine/kemit/emit.py, exit codes included: 0 printed, 1 refused (or a bad
// config file or spec), 2 a usage error, an unknown family or an unknown flavor.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <iostream>
#include <optional>
#include <string>
#include <tuple>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "kemit/engine.h"
#include "kemit/llvm/flavors.h"
#include "kemit/tooling/version.h"
#include "serve.h"

namespace {

using nlohmann::json;

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string text_of(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// What --version prints: the CMake project VERSION and git describe of the tree it was built from.
std::string version_text() { return kemit::tooling::version_line("kemit_emit"); }

// The harness's input limits (docs/limits.md), kept here too: a config file named on the command
// line is read by the engine itself, and a FIFO must not hang it nor deep nesting exhaust the stack.
constexpr std::uintmax_t MAX_CONFIG_BYTES = 256u << 20;
constexpr int MAX_NESTING = 64;

// How deep objects and arrays nest in a JSON text (brackets inside strings do not count).
int deepest_nesting(const std::string& text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char ch : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (ch == '\\') escaped = true;
      else if (ch == '"') in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '[' || ch == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (ch == ']' || ch == '}') {
      --depth;
    }
  }
  return deepest;
}

// The text of a config file: a regular file within the size limit, nested at most MAX_NESTING.
std::string read_config_text(const std::string& path) {
  std::error_code error;
  auto status = std::filesystem::status(path, error);  // stat, not open: opening a FIFO would wait for a writer
  if (error) throw ConfigError(path + ": cannot open the config file (" + error.message() + ")");
  if (!std::filesystem::is_regular_file(status)) throw ConfigError(path + ": not a regular file; give a parity config file");
  if (std::filesystem::file_size(path, error) > MAX_CONFIG_BYTES)
    throw ConfigError(path + ": the file is larger than the input limit of 256 MiB");
  std::ifstream handle(path, std::ios::binary);
  if (!handle) throw ConfigError(path + ": cannot open the config file");
  std::string text((std::istreambuf_iterator<char>(handle)), std::istreambuf_iterator<char>());
  if (deepest_nesting(text) > MAX_NESTING)
    throw ConfigError(path + ": nesting deeper than the input limit of " + std::to_string(MAX_NESTING) + " levels");
  return text;
}

// FILE:ID -> (family, arch, spec) from a parity config file.
std::tuple<std::string, std::string, json> config_from_file(const std::string& reference) {
  size_t colon = reference.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == reference.size())
    throw ConfigError("--config " + reference +
                      ": give FILE:ID, the config file and the id of one of its configs (e.g. "
                      "parity/configs/elementwise.json:12)");
  std::string path = reference.substr(0, colon);
  std::string config_id = reference.substr(colon + 1);
  std::string text = read_config_text(path);
  json document;
  try {
    document = json::parse(text);
    for (const auto& config : document.at("configs"))
      if (text_of(config.at("id")) == config_id)
        return {text_of(document.at("family")), text_of(config.at("arch")), config.at("spec")};
  } catch (const json::exception& error) {
    throw ConfigError(path + ": " + error.what());
  }
  throw ConfigError(path + ": no config with id " + config_id);
}

// Print the one section asked for; the exit code as emit.py returns it.
int print_result(const kemit::EmitResult& result, bool canonical, bool plan) {
  if (result.rejected) {
    std::cerr << "rejected: " << result.reason << "\n";
    return 1;
  }
  if (plan) {
    std::cout << result.plan;
    return 0;
  }
  if (canonical) {
    std::cout << result.canonical;
    return 0;
  }
  const kemit::FlavorSection& section = result.ll.at(0);
  if (section.rejected) {
    std::cerr << "rejected at " << section.flavor << ": " << section.reason << "\n";
    return 1;
  }
  std::cout << section.text;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kemit_emit: print one config's IR, or serve the engine protocol (--serve)", "kemit_emit"};
  bool serve = false, canonical = false, plan = false;
  const std::string newest = kemit::llvm::newest_flavor().name;  // tables/flavors.json's last row
  std::string config, family, arch, spec_text = "{}", flavor_name = newest;
  app.add_flag("--serve", serve, "serve the engine protocol on stdin/stdout");
  app.add_option("--config", config, "take family, arch and spec from FILE:ID");
  app.add_option("--family", family, "the kernel family (e.g. elementwise), with --arch and --spec");
  app.add_option("--arch", arch, "the processor (e.g. gfx942)");
  app.add_option("--spec", spec_text, "the spec as JSON")->capture_default_str();
  std::string flavors;
  for (const auto& name : kemit::llvm::flavor_names()) flavors += (flavors.empty() ? "" : ", ") + name;
  app.add_option("--flavor", flavor_name,
                 "the LLVM flavor to print (" + flavors + "; default: the newest, " + newest +
                     "; a newer llvmN resolves to it)");
  app.set_version_flag("--version", version_text(), "print the version and exit");
  app.add_flag("--canonical", canonical, "print the canonical IR instead");
  app.add_flag("--plan", plan, "print the launch plan instead (docs/protocol.md)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& help_or_version) {
    return app.exit(help_or_version);
  } catch (const CLI::ParseError& error) {
    app.exit(error);
    return 2;  // argparse's usage-error code, as emit.py exits
  }
  if (serve) {
    std::ios::sync_with_stdio(false);
    return kemit::serve::serve(std::cin, std::cout);
  }
  std::string spec_family, spec_arch;
  json spec;
  try {
    if (!config.empty()) {
      std::tie(spec_family, spec_arch, spec) = config_from_file(config);
    } else if (!family.empty() && !arch.empty()) {
      spec_family = family;
      spec_arch = arch;
      if (deepest_nesting(spec_text) > MAX_NESTING)
        throw ConfigError("--spec is not valid JSON: nesting deeper than the input limit of " +
                          std::to_string(MAX_NESTING) + " levels");
      spec = kemit::serve::parse_line(spec_text);
    } else {
      std::cerr << app.help() << "kemit_emit: error: give --config FILE:ID, or --family and --arch (with --spec)\n";
      return 2;
    }
  } catch (const std::exception& error) {  // an unreadable config or a malformed --spec: input error
    std::cerr << "error: " << error.what() << "\n";
    return 2;
  }
  kemit::EmitResult result;
  std::string note;
  try {
    auto [flavor, resolved_note] = kemit::llvm::resolve_flavor(flavor_name);
    note = resolved_note;
    result = kemit::emit(spec_family, spec_arch, spec, {flavor->name});
  } catch (const std::invalid_argument& error) {  // Python: except (UnknownFlavor, ValueError)
    std::cerr << "error: " << error.what() << "\n";
    return 2;
  }
  if (!note.empty()) std::cerr << note << "\n";
  return print_result(result, canonical, plan);
}
