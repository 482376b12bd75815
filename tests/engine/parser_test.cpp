// The C++ canonical parser (cpp_engine/src/ir/parser.cpp): print(parse(text)) == text for every
// emitting parity config the C++ engine registers, and line-numbered refusals with the texts the
// Python parser gives (tests/engine/test_parser.py checks the two engines against each other).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kemit/engine.h"
#include "kemit/ir/parser.h"
#include "kemit/ir/printer.h"

namespace {

using kemit::ir::ParseError;

std::string reprint(const std::string& text) {
  std::string out = kemit::ir::HEADER;
  for (const auto& kernel : kemit::ir::parse_module(text))
    out += kemit::ir::print_kernel(kernel).substr(std::strlen(kemit::ir::HEADER));
  return out;
}

TEST(Parser, RoundTripsEveryEmittingParityConfig) {
  int checked = 0;
  for (const auto& family : kemit::family_names()) {
    std::ifstream in(std::string(KEMIT_SOURCE_ROOT) + "/parity/configs/" + family + ".json");
    if (!in) continue;
    auto data = nlohmann::json::parse(in);
    for (const auto& config : data["configs"]) {
      auto result = kemit::emit(family, config["arch"].get<std::string>(), config["spec"], {});
      if (result.rejected) continue;
      EXPECT_EQ(reprint(result.canonical), result.canonical) << family << " config " << config["id"];
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

const char* const SMALL =
    "; kemit canonical IR 1\n"
    "kernel @t {\n"
    "  arch gfx90a\n"
    "  param %0 out : ptr.global\n"
    "  %1 = workitem_id {dim=x} : i32\n"
    "  %2 = const {value=1} : i32\n"
    "  for %3 = %1 to %2 step %2 {\n"
    "    yield\n"
    "  }\n"
    "}\n";

std::string error_of(const std::string& text) {
  try {
    reprint(text);
  } catch (const ParseError& error) {
    return error.what();
  }
  return "";
}

TEST(Parser, RefusesWithLineNumbers) {
  EXPECT_EQ(error_of(std::string(SMALL).substr(1)), "line 1: expected the header '; kemit canonical IR 1'");
  std::string bad_id = SMALL;
  bad_id.replace(bad_id.find("%2 = const"), 2, "%5");
  EXPECT_EQ(error_of(bad_id), "line 6: value %5 is out of order (the next id is %2)");
  std::string bad_op = SMALL;
  bad_op.replace(bad_op.find("workitem_id"), 11, "frobnicate_");
  EXPECT_EQ(error_of(bad_op), "line 5: unknown op 'frobnicate_'");
  std::string named = SMALL;
  named.replace(named.find("for %3"), 3, "%4 = for");
  EXPECT_EQ(error_of(named), "line 7: the for has 0 result(s), the text names 1");
}

TEST(Parser, RefusesTextThePrinterWouldNotWrite) {
  std::string spaced = SMALL;
  spaced.replace(spaced.find("{dim=x}"), 7, "{dim=x }");
  EXPECT_EQ(error_of(spaced), "line 5: dimension must be one of x, y, z (got x )");
  EXPECT_EQ(reprint(SMALL), SMALL);
}

}  // namespace
