#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "kemit/input_limits.h"
#include "kemit/lane/configs.h"

namespace kemit::lane {
namespace {

bool wanted(const std::string& family, const std::vector<std::string>& only) {
  if (only.empty()) return true;
  return std::any_of(only.begin(), only.end(),
                     [&](const std::string& part) { return family.find(part) != std::string::npos; });
}

ParityConfig read_config(const nlohmann::json& item, const std::string& family, const std::string& path, size_t index) {
  auto where = [&](const std::string& field) {
    return path + ": config #" + std::to_string(index) + " (id " +
           (item.contains("id") ? item["id"].dump() : std::string("?")) + "): field '" + field + "'";
  };
  for (const char* field : {"id", "arch", "expect", "spec"})
    if (!item.contains(field)) throw std::runtime_error(where(field) + " is missing");
  ParityConfig config;
  config.family = family;
  if (!item["id"].is_number_integer()) throw std::runtime_error(where("id") + " must be an integer");
  config.id = item["id"].get<int>();
  if (!item["arch"].is_string()) throw std::runtime_error(where("arch") + " must be a string");
  config.arch = item["arch"].get<std::string>();
  config.expect = item["expect"].is_string() ? item["expect"].get<std::string>() : "";
  if (config.expect != "emit" && config.expect != "reject")
    throw std::runtime_error(where("expect") + " must be \"emit\" or \"reject\"");
  config.spec = item["spec"];
  if (item.contains("why") && item["why"].is_string()) config.why = item["why"].get<std::string>();
  if (item.contains("expect_no_spill")) {
    if (!item["expect_no_spill"].is_boolean()) throw std::runtime_error(where("expect_no_spill") + " must be a boolean");
    config.expect_no_spill = item["expect_no_spill"].get<bool>();
  }
  return config;
}

std::vector<ParityConfig> read_family_file(const std::filesystem::path& file) {
  nlohmann::json document;
  try {
    std::string text = limits::read_regular_file(file, file.string());
    limits::check_json_limits(text, file.string());
    document = nlohmann::json::parse(text);
  } catch (const limits::InputLimitError& error) {
    throw std::runtime_error(std::string(error.what()) + "; see docs/limits.md");
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(file.string() + ": not valid JSON: " + error.what());
  }
  std::string family = file.stem().string();
  if (!document.is_object() || document.value("family", "") != family || !document.contains("configs") ||
      !document["configs"].is_array())
    throw std::runtime_error(file.string() + ": expected {\"family\": \"" + family + "\", \"configs\": [...]}");
  std::vector<ParityConfig> configs;
  for (size_t i = 0; i < document["configs"].size(); ++i)
    configs.push_back(read_config(document["configs"][i], family, file.string(), i));
  std::sort(configs.begin(), configs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return configs;
}

}  // namespace

std::vector<ParityConfig> load_parity_configs(const std::string& folder, const std::vector<std::string>& only) {
  if (!std::filesystem::is_directory(folder))
    throw std::runtime_error(folder + ": no such folder of parity configs (pass --configs DIR)");
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    if (entry.path().extension() == ".json" && wanted(entry.path().stem().string(), only)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<ParityConfig> configs;
  for (const auto& file : files) {
    auto family_configs = read_family_file(file);
    configs.insert(configs.end(), family_configs.begin(), family_configs.end());
  }
  return configs;
}

}  // namespace kemit::lane
