// Promotion (see promote.h).
#include "kemit/fuzz/promote.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "kemit/driver/config.h"
#include "kemit/driver/reports.h"

namespace kemit::fuzz {
namespace {

using nlohmann::json;

// JSON with ", " and ": " separators on one line, as the config files are written by hand.
std::string spaced(const json& value) {
  if (value.is_object()) {
    std::string out = "{";
    for (auto it = value.begin(); it != value.end(); ++it)
      out += (it == value.begin() ? "" : ", ") + json(it.key()).dump() + ": " + spaced(it.value());
    return out + "}";
  }
  if (value.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < value.size(); ++i) out += (i ? ", " : "") + spaced(value[i]);
    return out + "]";
  }
  return value.dump(-1, ' ', true);  // ASCII, like the files
}

std::string read_file(const std::string& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw driver::ConfigError(file + ": cannot read the config file to promote into");
  return text.str();
}

}  // namespace

std::string config_line(int id, const PromotedConfig& config) {
  return "{\"id\": " + std::to_string(id) + ", \"arch\": " + json(config.arch).dump() + ", \"expect\": " +
         (config.expect_emit ? "\"emit\"" : "\"reject\"") + ", \"why\": " + spaced(json(config.why)) +
         ", \"spec\": " + spaced(config.spec) + "}";
}

int append_config(const std::string& file, const std::string& display_path, const PromotedConfig& config) {
  std::string text = read_file(file);
  auto family = driver::parse_family_configs(text, display_path);
  int id = 1;
  for (const auto& existing : family.configs) id = std::max(id, existing.id + 1);
  size_t close = text.rfind(']');
  size_t last = close == std::string::npos ? close : text.find_last_not_of(" \t\r\n", close - 1);
  if (last == std::string::npos || (text[last] != '}' && text[last] != '['))
    throw driver::ConfigError(display_path + ": cannot find the end of the configs array to append to");
  std::string insert = std::string(text[last] == '}' ? "," : "") + "\n    " + config_line(id, config);
  text.insert(last + 1, insert);
  auto check = driver::parse_family_configs(text, display_path);  // throws ConfigError: nothing written
  if (check.configs.empty() || check.configs.back().id != id)
    throw driver::ConfigError(display_path + ": the promoted config did not land last; append it by hand");
  driver::write_file_atomically(file, text);
  return id;
}

}  // namespace kemit::fuzz
