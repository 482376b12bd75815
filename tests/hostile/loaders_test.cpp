// Hostile input to the loaders (docs/limits.md): every breach is a clear error
// naming the file, the line and the limit, never an abort, a stack overflow or a wrong figure.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "answer_line.h"
#include "kemit/driver/config.h"
#include "kemit/driver/strict_json.h"
#include "kemit/golden/error.h"
#include "kemit/golden/shard_io.h"

namespace kemit {
namespace {

namespace fs = std::filesystem;

std::string config_error(const std::string& text) {
  try {
    driver::parse_family_configs(text, "parity/configs/elementwise.json");
  } catch (const driver::ConfigError& error) {
    return error.what();
  }
  return "";
}

std::string one_config(const std::string& id, const std::string& spec) {
  return "{\"family\": \"elementwise\", \"configs\": [\n  {\"id\": " + id +
         ", \"arch\": \"gfx90a\", \"expect\": \"emit\", \"why\": \"w\", \"spec\": " + spec + "}\n]}\n";
}

// A number too large for a double is an input error, not an uncaught out_of_range (abort, exit 134).
TEST(ConfigLoading, ANumberOutOfRangeNamesFileLineAndLimit) {
  EXPECT_EQ(config_error(one_config("1", "{\"vec\": 1e400}")),
            "parity/configs/elementwise.json:2: the number 1e400 is out of range (not finite as a double); see "
            "docs/limits.md");
}

// Nesting costs quadratic time when each container keeps its path, and a deep spec overflows the
// stack when copied: the depth is refused before the tree is built.
TEST(ConfigLoading, NestingPastTheLimitIsRefusedAtItsLine) {
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(config_error(one_config("1", "{\"a\": " + deep + "}")),
            "parity/configs/elementwise.json:2: nesting deeper than the input limit of 64 levels; see docs/limits.md");
}

TEST(ConfigLoading, DuplicateKeysAreStillFoundWithTheirPath) {
  auto parsed = driver::parse_json_detecting_duplicates("{\"configs\": [{}, {\"spec\": {\"a\": [1, {\"k\": 1, \"k\": 2}]}}]}");
  ASSERT_EQ(parsed.duplicates.size(), 1u);
  EXPECT_EQ(parsed.duplicates[0].path, "configs[1].spec.a[1]");
  EXPECT_EQ(parsed.duplicates[0].key, "k");
}

// An id above 10^9 is refused with the range, not as "must be an integer >= 1".
TEST(ConfigLoading, AnIdAboveTheRangeSaysTheRange) {
  EXPECT_EQ(config_error(one_config("1000000001", "{}")),
            "parity/configs/elementwise.json: config id 1000000001: field 'id' must be an integer from 1 to "
            "1000000000 (found number 1000000001)");
}

// An answer nested ~70,000 deep would overflow the stack in a recursive copy of the tree.
TEST(AnswerLine, DeepNestingIsRefusedBeforeATreeIsBuilt) {
  nlohmann::json parsed;
  std::string deep = "{\"id\": 1, \"status\": " + std::string(70000, '[') + std::string(70000, ']') + "}";
  EXPECT_EQ(driver::parse_answer_line(deep, parsed),
            "breaks an input limit (nesting deeper than the input limit of 64 levels)");
  EXPECT_EQ(driver::parse_answer_line("{\"id\": 1e400}", parsed),
            "breaks an input limit (the number 1e400 is out of range (not finite as a double))");
  EXPECT_EQ(driver::parse_answer_line("{\"id\": 3, \"status\": \"ok\"}", parsed), "");
  EXPECT_EQ(parsed["id"], 3);
}

// The plain fast path skips the limit scan for the lines it takes, so it must take none past the
// limit: 64 containers inside one another are fine, 65 are refused as the scan refuses them.
TEST(AnswerLine, ThePlainPathStopsAtTheDepthLimit) {
  nlohmann::json parsed;
  auto nested = [](size_t arrays) { return "{\"id\": " + std::string(arrays, '[') + std::string(arrays, ']') + "}"; };
  EXPECT_EQ(driver::parse_answer_line(nested(63), parsed), "");  // the object is the 64th level
  EXPECT_EQ(driver::parse_answer_line(nested(64), parsed),
            "breaks an input limit (nesting deeper than the input limit of 64 levels)");
  EXPECT_TRUE(parsed.is_null());
}

// The plain path scans strings eight bytes at a time: a quote, an escape, a control byte or a
// non-ASCII byte at any position of a word decodes (or fails) as nlohmann decides.
TEST(AnswerLine, StringsDecodeAsNlohmannDecodesThem) {
  const std::vector<std::string> specials = {"\\\"", "\\\\", "\\n", "\\u00e9", "\xc3\xa9", "\\/", "\t", "\x7f"};
  for (const auto& special : specials)
    for (size_t at = 0; at < 19; ++at) {
      std::string text = std::string(at, 'a') + special + std::string(19 - at, 'b');
      std::string line = "{\"id\": 1, \"ll\": {\"t\": \"" + text + "\"}, \"" + text + "\": 2}";
      nlohmann::json parsed, expected = nlohmann::json::parse(line, nullptr, false);
      std::string problem = driver::parse_answer_line(line, parsed);
      if (expected.is_discarded()) {
        EXPECT_EQ(problem, "is not a JSON object") << line;
      } else {
        EXPECT_EQ(problem, "") << line;
        EXPECT_EQ(parsed, expected) << line;
      }
    }
}

std::string shard_error(const std::string& text, const std::string& label = "golden/shards/conv.json") {
  try {
    golden::parse_shard(text, label);
  } catch (const golden::GoldenError& error) {
    return error.what();
  }
  return "";
}

std::string valid_shard() {
  std::ifstream in(std::string(KEMIT_GOLDEN_FIXTURES) + "/valid/conv.json");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Bytes of 2^63 or more would overflow bytes_delta (+928 bytes for 2^64-1): refused at load.
TEST(ShardLoading, ABytesFigureAboveTheCountLimitIsRefused) {
  std::string text = valid_shard();
  size_t at = text.find("\"bytes\": ");
  ASSERT_NE(at, std::string::npos);
  size_t end = text.find_first_of(",}", at);
  for (const char* huge : {"18446744073709551615", "9223372036854775808", "9007199254740992"}) {
    std::string bad = text.substr(0, at) + "\"bytes\": " + huge + text.substr(end);
    std::string error = shard_error(bad);
    EXPECT_NE(error.find(std::string(" is ") + huge + ", above the input limit of 9007199254740991 for counts and sizes"),
              std::string::npos)
        << error;
    EXPECT_EQ(error.rfind("golden/shards/conv.json:", 0), 0u) << error;
  }
}

TEST(ShardLoading, NumbersOutOfRangeAndDeepNestingNameTheLine) {
  EXPECT_NE(shard_error("{\n\"format\": 1e400}").find("golden/shards/conv.json:2: the number 1e400 is out of range"),
            std::string::npos);
  EXPECT_NE(shard_error("{\"format\": 1, \"x\": " + std::string(5000, '[')).find("nesting deeper than the input limit"),
            std::string::npos);
}

// A directory in place of a shard is named as a directory, not called "invalid JSON".
TEST(ShardLoading, ADirectoryInPlaceOfAShardIsNamedAsSuch) {
  char pattern[] = "/tmp/kemit_hostile_XXXXXX";
  fs::path dir = mkdtemp(pattern);
  fs::create_directory(dir / "conv.json");
  try {
    golden::load_shard(dir / "conv.json");
    ADD_FAILURE() << "no error";
  } catch (const golden::GoldenError& error) {
    EXPECT_NE(std::string(error.what()).find("conv.json: is a directory; kemit reads only regular files"),
              std::string::npos)
        << error.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kemit
