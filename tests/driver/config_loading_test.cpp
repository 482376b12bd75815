// Strict loading of parity config files: every rule of docs/protocol.md, with the exact message.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kemit/driver/config.h"
#include "kemit/driver/strict_json.h"

namespace kemit::driver {
namespace {

const std::string kFile = "parity/configs/alpha.json";

std::string wrap(const std::string& configs) { return R"({"family": "alpha", "configs": [)" + configs + "]}"; }

const std::string kGood1 = R"({"id": 1, "arch": "gfx942", "expect": "emit", "why": "w", "spec": {"op": "add", "dtype": "f32"}})";
const std::string kGood2 = R"({"id": 2, "arch": "gfx90a", "expect": "reject", "why": "w2", "spec": {}, "expect_no_spill": true})";

// The message of the ConfigError that parsing `text` throws ("" when it does not throw).
std::string load_error(const std::string& text, const std::string& file = kFile) {
  try {
    parse_family_configs(text, file);
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "";
}

TEST(ConfigLoading, ReadsAValidFile) {
  FamilyConfigs family = parse_family_configs(wrap(kGood1 + "," + kGood2), kFile);
  EXPECT_EQ(family.family, "alpha");
  ASSERT_EQ(family.configs.size(), 2u);
  EXPECT_EQ(family.configs[0].id, 1);
  EXPECT_EQ(family.configs[0].arch, "gfx942");
  EXPECT_EQ(family.configs[0].expect, Expect::emit);
  EXPECT_EQ(family.configs[0].spec, nlohmann::json({{"op", "add"}, {"dtype", "f32"}}));
  EXPECT_FALSE(family.configs[0].expect_no_spill.has_value());
  EXPECT_EQ(family.configs[1].expect, Expect::reject);
  EXPECT_EQ(family.configs[1].expect_no_spill, std::optional<bool>(true));
}

TEST(ConfigLoading, SpecDigestIsSha256OfSortedCompactJson) {
  // Python: sha256(json.dumps({"arch":..,"spec":..}, sort_keys=True, separators=(",",":"))).
  FamilyConfigs family = parse_family_configs(wrap(kGood1), kFile);
  EXPECT_EQ(family.configs[0].spec_digest, "818335a729f9c33a0c13fa1854aab0ccb2b87bbc00fffe6b6dd29911c475bafe");
}

TEST(ConfigLoading, DuplicateKeyInAConfig) {
  std::string config = R"({"id": 2, "arch": "gfx942", "arch": "gfx90a", "expect": "emit", "why": "w", "spec": {}})";
  EXPECT_EQ(load_error(wrap(kGood1 + "," + config)),
            "parity/configs/alpha.json: config id 2: duplicate key 'arch' (JSON parsers silently keep only one of "
            "them); remove or rename one");
}

TEST(ConfigLoading, DuplicateKeyInsideASpec) {
  std::string config = R"({"id": 2, "arch": "gfx942", "expect": "emit", "why": "w", "spec": {"op": "a", "op": "b"}})";
  EXPECT_EQ(load_error(wrap(kGood1 + "," + config)),
            "parity/configs/alpha.json: config id 2: duplicate key 'op' in spec (JSON parsers silently keep only one "
            "of them); remove or rename one");
}

TEST(ConfigLoading, DuplicateTopLevelKey) {
  EXPECT_EQ(load_error(R"({"family": "alpha", "configs": [], "configs": []})"),
            "parity/configs/alpha.json: duplicate top-level key 'configs' (JSON parsers silently keep only one of "
            "them); remove or rename one");
}

TEST(ConfigLoading, UnknownConfigField) {
  std::string config = R"({"id": 1, "arch": "gfx942", "expected": "emit", "expect": "emit", "why": "w", "spec": {}})";
  EXPECT_EQ(load_error(wrap(config)),
            "parity/configs/alpha.json: config id 1: unknown field 'expected' (allowed: id, arch, expect, why, spec, "
            "expect_no_spill); fix or remove it");
}

TEST(ConfigLoading, UnknownTopLevelField) {
  EXPECT_EQ(load_error(R"({"family": "alpha", "configs": [], "flavors": []})"),
            "parity/configs/alpha.json: unknown top-level field 'flavors' (allowed: family, configs, comment); fix or "
            "remove it");
}

TEST(ConfigLoading, DuplicateIdSuggestsTheNextFreeOne) {
  std::string again = R"({"id": 1, "arch": "gfx942", "expect": "emit", "why": "w3", "spec": {"op": "x"}})";
  EXPECT_EQ(load_error(wrap(kGood1 + "," + kGood2 + "," + again)),
            "parity/configs/alpha.json: config id 1: duplicate id (configs[0] and configs[2]); ids are unique and "
            "never reused: give the newer config the next free id, 3");
}

TEST(ConfigLoading, WrongTypeNamesFieldAndFoundValue) {
  std::string config = R"({"id": 1, "arch": 7, "expect": "emit", "why": "w", "spec": {}})";
  EXPECT_EQ(load_error(wrap(config)),
            "parity/configs/alpha.json: config id 1: field 'arch' must be a non-empty string (found number 7)");
}

TEST(ConfigLoading, BadIdIsNamedByIndex) {
  std::string config = R"({"id": "3", "arch": "gfx942", "expect": "emit", "why": "w", "spec": {}})";
  EXPECT_EQ(load_error(wrap(kGood1 + "," + config)),
            "parity/configs/alpha.json: configs[1]: field 'id' must be an integer from 1 to 1000000000 (found string \"3\")");
  std::string zero = R"({"id": 0, "arch": "gfx942", "expect": "emit", "why": "w", "spec": {}})";
  EXPECT_EQ(load_error(wrap(zero)),
            "parity/configs/alpha.json: configs[0]: field 'id' must be an integer from 1 to 1000000000 (found number 0)");
}

TEST(ConfigLoading, BadExpectWhySpecAndSpill) {
  auto with = [](const std::string& field, const std::string& value) {
    nlohmann::json config = nlohmann::json::parse(kGood1);
    config[field] = nlohmann::json::parse(value);
    return load_error(wrap(config.dump()));
  };
  EXPECT_EQ(with("expect", "\"maybe\""),
            "parity/configs/alpha.json: config id 1: field 'expect' must be \"emit\" or \"reject\" (found string "
            "\"maybe\")");
  EXPECT_EQ(with("why", "\"\""),
            "parity/configs/alpha.json: config id 1: field 'why' must be a non-empty one-line string (found string "
            "\"\")");
  EXPECT_EQ(with("why", "\"two\\nlines\""),
            "parity/configs/alpha.json: config id 1: field 'why' must be a non-empty one-line string (found string "
            "\"two\\nlines\")");
  EXPECT_EQ(with("spec", "[1]"),
            "parity/configs/alpha.json: config id 1: field 'spec' must be an object (found array [1])");
  EXPECT_EQ(with("expect_no_spill", "1"),
            "parity/configs/alpha.json: config id 1: field 'expect_no_spill' must be a boolean (found number 1)");
  EXPECT_EQ(with("arch", "\"\""),
            "parity/configs/alpha.json: config id 1: field 'arch' must be a non-empty string (found string \"\")");
}

// Whether a processor is known is the engines' to say (hello's arches): the loader takes any name,
// and the driver checks it once the workers have answered hello (cli_test.cpp).
TEST(ConfigLoading, UnknownProcessorIsAllowedWhenTheRefusalIsExpected) {
  std::string config = R"({"id": 1, "arch": "gfx000", "expect": "reject", "why": "unknown processor", "spec": {}})";
  EXPECT_EQ(parse_family_configs(wrap(config), kFile).configs.at(0).arch, "gfx000");
}

TEST(ConfigLoading, MissingField) {
  EXPECT_EQ(load_error(wrap(R"({"id": 1, "arch": "gfx942", "expect": "emit", "spec": {}})")),
            "parity/configs/alpha.json: config id 1: missing field 'why'");
}

TEST(ConfigLoading, IdsMustIncrease) {
  std::string config2 = R"({"id": 2, "arch": "gfx942", "expect": "emit", "why": "w", "spec": {}})";
  EXPECT_EQ(load_error(wrap(config2 + "," + kGood1)),
            "parity/configs/alpha.json: config id 1: comes after id 2 (configs[1]); keep configs in increasing id "
            "order, one per line");
}

TEST(ConfigLoading, FamilyNameRules) {
  EXPECT_EQ(load_error(R"({"family": "beta", "configs": []})"),
            "parity/configs/alpha.json: field 'family' is 'beta' but the file is named 'alpha.json'; the file name "
            "must be the family name");
  EXPECT_EQ(load_error(R"({"family": "Alpha", "configs": []})", "parity/configs/Alpha.json"),
            "parity/configs/Alpha.json: field 'family': 'Alpha' must match [a-z0-9_]+");
  EXPECT_EQ(load_error(R"({"family": 3, "configs": []})"),
            "parity/configs/alpha.json: field 'family' must be a string (found number 3)");
}

TEST(ConfigLoading, SyntaxErrorSaysWhere) {
  std::string message = load_error("{\"family\": \"alpha\",\n \"configs\": [}");
  EXPECT_EQ(message.rfind("parity/configs/alpha.json: not valid JSON: ", 0), 0u) << message;
  EXPECT_NE(message.find("line 2"), std::string::npos) << message;
}

TEST(StrictJson, DuplicatesCarryTheirPath) {
  StrictParse parsed = parse_json_detecting_duplicates(R"({"a": [1, {"x": 1}, {"y": {"k": 1, "k": 2}}], "b": 1, "b": 2})");
  ASSERT_EQ(parsed.duplicates.size(), 2u);
  EXPECT_EQ(parsed.duplicates[0].path, "a[2].y");
  EXPECT_EQ(parsed.duplicates[0].key, "k");
  EXPECT_EQ(parsed.duplicates[1].path, "");
  EXPECT_EQ(parsed.duplicates[1].key, "b");
}

TEST(ConfigLoading, DirectoryHonoursOnlyAndSortsByFamily) {
  std::string dir = std::string(KEMIT_DRIVER_FIXTURES) + "/configs/basic";
  auto all = load_config_dir(dir, "basic", {});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].family, "alpha");
  EXPECT_EQ(all[1].family, "beta");
  EXPECT_EQ(all[0].display_path, "basic/alpha.json");
  auto only = load_config_dir(dir, "basic", {"et"});
  ASSERT_EQ(only.size(), 1u);
  EXPECT_EQ(only[0].family, "beta");
}

TEST(ConfigLoading, MissingDirectoryIsAnError) {
  try {
    load_config_dir("/nonexistent/kemit/configs", "/nonexistent/kemit/configs", {});
    FAIL() << "no error";
  } catch (const ConfigError& error) {
    EXPECT_EQ(std::string(error.what()), "/nonexistent/kemit/configs: not a directory (pass --configs DIR or --root DIR)");
  }
}

}  // namespace
}  // namespace kemit::driver
