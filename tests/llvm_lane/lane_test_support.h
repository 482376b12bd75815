// Helpers shared by the lane tests: read a module from modules/, check one
// module, skip when a flavor's LLVM is not installed on this machine.
#pragma once
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "kemit/driver/worker_pool.h"
#include "kemit/lane/lane.h"

namespace kemit::lane::testing {

inline std::string read_module(const std::string& file) {
  std::ifstream in(std::string(KEMIT_LANE_MODULES_DIR) + "/" + file, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing test module " << file;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline LaneModule module_from(const std::string& file, const std::string& flavor, const std::string& arch,
                              bool expect_no_spill = false) {
  return LaneModule{file.substr(0, file.find('.')), 1, flavor, arch, read_module(file), expect_no_spill};
}

// The flavors as the C++ engine's worker says them in its hello: the lane gets them only so.
inline const std::vector<driver::FlavorFacts>& served_flavors() {
  static const std::vector<driver::FlavorFacts> facts = [] {
    driver::WorkerPool pool({driver::default_cpp_command(driver::default_locations())}, driver::PoolOptions{});
    return pool.start().at(0).flavor_facts;
  }();
  return facts;
}

inline const driver::FlavorFacts& served_flavor(const std::string& name) { return flavor_facts(served_flavors(), name); }

inline LaneOptions test_options() {
  LaneOptions options;
  options.jobs = 2;
  options.flavors = served_flavors();
  return options;
}

inline LaneResult check_one(const LaneModule& module, const LaneOptions& options = test_options()) {
  auto results = check_modules({module}, options);
  return results.at(0);
}

inline bool toolchain_installed(const std::string& flavor) {
  return toolchain_problem(default_toolchains(), served_flavor(flavor).major).empty();
}

}  // namespace kemit::lane::testing

// A missing LLVM is TOOLCHAIN_MISSING in the lane (never a pass); the set-up installs all three,
// so here it fails the test that needs it, saying which package to install.
#define REQUIRE_FLAVOR(flavor)                                                                           \
  do {                                                                                                   \
    if (!::kemit::lane::testing::toolchain_installed(flavor))                                            \
      GTEST_FAIL() << flavor << " toolchain not installed: "                                             \
                   << ::kemit::lane::toolchain_problem(::kemit::lane::default_toolchains(),              \
                                                        ::kemit::lane::testing::served_flavor(flavor).major); \
  } while (0)
