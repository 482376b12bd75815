// The real engines behind the real driver: both workers start, answer hello and speak the
// protocol on the elementwise configs without a CRASH or TIMEOUT. Parity itself (GREEN) is the
// gate's business (ci/gate.sh); this test guards the driver <-> engine contract.
#include <gtest/gtest.h>

#include <filesystem>

#include "kemit/driver/engine_command.h"
#include "scenario_support.h"

namespace kemit::driver {
namespace {

using namespace testing_support;

TEST(RealEngines, SpeakTheProtocolOnElementwise) {
  EngineLocations where = default_locations();
  std::string configs = where.root + "/parity/configs/elementwise.json";
  if (!std::filesystem::exists(where.build + "/cpp_engine/kemit_emit") ||
      !std::filesystem::exists(where.root + "/py_engine/kemit/emit.py") || !std::filesystem::exists(configs))
    FAIL() << "the real engines or the elementwise configs are missing: build kemit_emit (ci/setup.sh)";
  DriverRun run = run_driver({"--only", "elementwise", "--jobs", "1", "--timeout", "60"});
  ASSERT_NE(run.exit_code, 2) << run.err;
  ASSERT_EQ(run.report["families"].size(), 1u) << run.out;
  const nlohmann::json& family = run.report["families"][0];
  EXPECT_EQ(family["lacking_engines"], nlohmann::json::array());
  ASSERT_FALSE(family["configs"].empty());
  for (const auto& config : family["configs"])
    for (const auto& [section, result] : config["sections"].items()) {
      EXPECT_NE(result["verdict"], "CRASH") << "config " << config["id"] << " " << section << ": " << result.dump();
      EXPECT_NE(result["verdict"], "TIMEOUT") << "config " << config["id"] << " " << section;
    }
}

}  // namespace
}  // namespace kemit::driver
