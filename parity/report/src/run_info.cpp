#include "kemit/report/run_info.h"

#include <cstdio>
#include <ctime>
#include <filesystem>

namespace kemit::report {
namespace {

std::string quoted_for_shell(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool is_output_flag(const std::string& arg) { return arg == "--shard" || arg == "--json" || arg == "--junit"; }

}  // namespace

std::string tool_version() { return KEMIT_REPORT_VERSION; }

std::string tree_commit(const std::string& root) {
  std::string command = "git -C " + quoted_for_shell(root) + " rev-parse HEAD 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return "unknown";
  char buffer[128] = {};
  std::string out;
  while (fgets(buffer, sizeof buffer, pipe)) out += buffer;
  int status = pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return status == 0 && out.size() == 40 ? out : "unknown";
}

std::string utc_now_iso8601() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string run_key_of(const std::vector<std::string>& argv) {
  std::string key;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (is_output_flag(arg)) {
      ++i;  // and its value
      continue;
    }
    std::string flag = arg.substr(0, arg.find('='));
    if (arg.find('=') != std::string::npos && is_output_flag(flag)) continue;
    std::string part = i == 0 ? std::filesystem::path(arg).filename().string() : arg;
    key += (key.empty() ? "" : " ") + quoted_for_shell(part);
  }
  return key;
}

RunClock::RunClock(std::string tool, const std::string& root, std::vector<std::string> argv, std::optional<Shard> shard)
    : start_(std::chrono::steady_clock::now()) {
  info_.tool = std::move(tool);
  info_.tool_version = tool_version();
  info_.commit = tree_commit(root);
  info_.started = utc_now_iso8601();
  info_.run_key = run_key_of(argv);
  info_.repro = std::move(argv);
  info_.shard = shard;
}

RunInfo RunClock::finish() const {
  RunInfo info = info_;
  info.duration_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return info;
}

}  // namespace kemit::report
