#include "kemit/driver/engine_command.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#ifndef KEMIT_SOURCE_ROOT
#error "KEMIT_SOURCE_ROOT must be defined by the build"
#endif
#ifndef KEMIT_BUILD_DIR
#error "KEMIT_BUILD_DIR must be defined by the build"
#endif

namespace kemit::driver {
namespace {

const char* kPython = "/usr/bin/python3";

bool is_executable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

// argv[0] as exec would find it, or "" when it is nowhere.
std::string locate(const std::string& program) {
  if (program.find('/') != std::string::npos) return is_executable(program) ? program : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && is_executable(dir + "/" + program)) return dir + "/" + program;
  return "";
}

// A path under `root` printed relative to it, so that commands read the same on every machine.
std::string relative_to(const std::string& path, const std::string& root) {
  std::filesystem::path relative = std::filesystem::path(path).lexically_relative(root);
  std::string text = relative.string();
  if (text.empty() || text.rfind("..", 0) == 0) return path;
  return text;
}

}  // namespace

EngineLocations default_locations() { return {KEMIT_SOURCE_ROOT, KEMIT_BUILD_DIR}; }

std::vector<std::string> shell_split(const std::string& command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < command.size(); ++i) {
    char c = command[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else if (c == '\'' || c == '"') {
      size_t close = i + 1;
      in_word = true;
      for (; close < command.size() && command[close] != c; ++close) {
        bool escape = c == '"' && command[close] == '\\' && close + 1 < command.size() &&
                      std::string("\"\\$`").find(command[close + 1]) != std::string::npos;
        word += command[escape ? ++close : close];
      }
      if (close >= command.size()) throw UsageError("unterminated " + std::string(1, c) + " quote in '" + command + "'");
      i = close;
    } else if (c == '\\' && i + 1 < command.size()) {
      word += command[++i];
      in_word = true;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

// A Python worker keeps its byte code under the build dir (never beside the sources): each of
// the gate's workers would otherwise compile the engine again on start-up when the caller's
// environment sets PYTHONDONTWRITEBYTECODE (an empty value turns that off for the worker only).
// Python checks each cached file against its source, so an edited module is compiled again.
std::vector<std::pair<std::string, std::string>> py_environment(const EngineLocations& where) {
  return {{"PYTHONPATH", where.root + "/py_engine"},
          {"PYTHONPYCACHEPREFIX", where.build + "/pycache"},
          {"PYTHONDONTWRITEBYTECODE", ""}};
}

EngineCommand default_py_command(const EngineLocations& where) {
  return {"py", {kPython, "-m", "kemit.emit", "--serve"}, py_environment(where)};
}

EngineCommand default_cpp_command(const EngineLocations& where) {
  return {"cpp", {where.build + "/cpp_engine/kemit_emit", "--serve"}, {}};
}

EngineCommand custom_command(const std::string& name, const std::string& command_line, const EngineLocations& where) {
  EngineCommand command{name, shell_split(command_line), {}};
  if (command.argv.empty()) throw UsageError("--" + name + "-cmd is empty; give the command that starts a worker");
  if (name == "py") command.env = py_environment(where);
  return command;
}

void check_engine_available(const EngineCommand& command, const EngineLocations& where, bool is_default) {
  const std::string& program = command.argv.front();
  if (locate(program).empty()) {
    std::string hint = command.name == "cpp" && is_default
                           ? "; build it: cmake --build " + where.build + " --target kemit_emit (or pass --cpp-cmd)"
                           : "; check --" + command.name + "-cmd";
    throw InfrastructureError(command.name + " engine not found: " + program + " does not exist or is not executable" +
                              hint);
  }
  if (command.name != "py" || !is_default) return;
  std::string package = where.root + "/py_engine/kemit";
  if (!std::filesystem::exists(package + "/emit.py") && !std::filesystem::exists(package + "/emit/__main__.py"))
    throw InfrastructureError("py engine not found: " + package +
                              "/emit.py is missing (python3 -m kemit.emit); pass --root DIR or --py-cmd");
}

ReproCommand repro_argv(const std::string& engine, const EngineLocations& where, const std::string& config_path,
                        int config_id, const std::string& section) {
  ReproCommand command{engine, where.root, {}, {}};
  if (engine == "py") {
    command.env = {{"PYTHONPATH", "py_engine"}};
    command.argv = {kPython, "-m", "kemit.emit"};
  } else {
    command.argv = {relative_to(where.build + "/cpp_engine/kemit_emit", where.root)};
  }
  command.argv.insert(command.argv.end(), {"--config", config_path + ":" + std::to_string(config_id)});
  if (section == "canonical")
    command.argv.push_back("--canonical");
  else
    command.argv.insert(command.argv.end(), {"--flavor", section});
  return command;
}

std::string repro_command(const std::string& engine, const EngineLocations& where, const std::string& config_path,
                          int config_id, const std::string& section) {
  ReproCommand command = repro_argv(engine, where, config_path, config_id, section);
  std::string line;
  for (const auto& [name, value] : command.env) line += name + "=" + value + " ";
  for (const auto& word : command.argv) line += (line.empty() || line.back() == ' ' ? "" : " ") + word;
  return line;
}

EngineCommand lane_engine_command(const std::string& engine, const std::string& engine_cmd,
                                  const EngineLocations& where) {
  if (engine != "cpp" && engine != "py")
    throw UsageError("--engine must be cpp or py (got '" + engine + "'); any other worker: --engine-cmd");
  EngineCommand command = !engine_cmd.empty() ? custom_command(engine, engine_cmd, where)
                          : engine == "py"    ? default_py_command(where)
                                              : default_cpp_command(where);
  check_engine_available(command, where, engine_cmd.empty());
  return command;
}

}  // namespace kemit::driver
