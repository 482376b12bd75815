// The protocol server: hello, emit, refusals and errors are all responses; Python-shaped
// texts for odd request fields; integers beyond 64 bits are still integers.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "serve.h"

namespace kemit::serve {
namespace {

using nlohmann::json;

TEST(Serve, Hello) {
  json response = respond({{"id", 0}, {"op", "hello"}});
  EXPECT_EQ(response["engine"], "cpp");
  EXPECT_EQ(response["protocol"], 1);
  EXPECT_EQ(response["status"], "ok");
  EXPECT_EQ(response["flavors"], json({"llvm16", "llvm19", "llvm22"}));
  EXPECT_NE(std::find(response["families"].begin(), response["families"].end(), "elementwise"),
            response["families"].end());
}

TEST(Serve, HelloListsTheTablesTheHarnessNeeds) {
  json hello = respond({{"id", 0}, {"op", "hello"}});
  EXPECT_NE(std::find(hello["arches"].begin(), hello["arches"].end(), "gfx942"), hello["arches"].end());
  ASSERT_EQ(hello["flavor_facts"].size(), hello["flavors"].size());
  for (size_t i = 0; i < hello["flavors"].size(); ++i)
    EXPECT_EQ(hello["flavor_facts"][i]["name"], hello["flavors"][i]);
  EXPECT_EQ(hello["flavor_facts"][0]["major"], 16);
  EXPECT_TRUE(hello["flavor_facts"][2]["datalayout"].is_string());
  ASSERT_EQ(hello["arch_facts"].size(), hello["arches"].size());
  for (size_t i = 0; i < hello["arches"].size(); ++i) EXPECT_EQ(hello["arch_facts"][i]["name"], hello["arches"][i]);
  EXPECT_EQ(hello["arch_facts"][1], json({{"name", "gfx942"},
                                          {"wave_size", 64},
                                          {"lds_bytes", 65536},
                                          {"mma", "mfma"},
                                          {"fp8_format", "fnuz"},
                                          {"max_block_lanes", 1024},
                                          {"max_grid_lanes", 4294967295LL},
                                          {"buffer_range", 2147483648LL}}));
  EXPECT_EQ(hello["arch_facts"][5], json({{"name", "gfx1201"},
                                          {"wave_size", 32},
                                          {"lds_bytes", 65536},
                                          {"mma", "wmma_gfx12"},
                                          {"fp8_format", ""},
                                          {"max_block_lanes", 1024},
                                          {"max_grid_lanes", 4294967295LL},
                                          {"buffer_range", 2147483648LL}}));
}

TEST(Serve, ParseSpecFillsTheDefaultsOrRefusesAsEmitDoes) {
  json ok = respond({{"id", 1}, {"op", "parse_spec"}, {"family", "elementwise"}, {"spec", {{"op", "mul"}}}});
  EXPECT_EQ(ok["status"], "ok");
  EXPECT_EQ(ok["spec"]["op"], "mul");
  EXPECT_EQ(ok["spec"]["dtype"], "f32");
  EXPECT_EQ(ok["spec"]["vec"], 1);
  EXPECT_EQ(respond({{"id", 2}, {"op", "parse_spec"}, {"family", "elementwise"}, {"spec", {{"vec", "x"}}}}),
            json({{"id", 2}, {"status", "rejected"}, {"reason", "field 'vec' must be an integer (got string)"}}));
  json unknown = respond({{"id", 3}, {"op", "parse_spec"}, {"family", "nope"}, {"spec", json::object()}});
  EXPECT_EQ(unknown["status"], "error");
  EXPECT_NE(unknown["error"].get<std::string>().find("unknown family 'nope'"), std::string::npos);
  EXPECT_EQ(respond({{"id", 4}, {"op", "parse_spec"}, {"family", "elementwise"}}),
            json({{"id", 4}, {"status", "error"}, {"error", "request lacks field 'spec'"}}));
}

TEST(Serve, EmitAnswersTheLaunchPlanAndTakesATestOnlyBufferRange) {
  json ok = respond({{"id", 1}, {"family", "elementwise"}, {"arch", "gfx942"}, {"spec", json::object()},
                     {"flavors", json::array()}});
  EXPECT_EQ(ok["plan"],
            "; kemit launch plan 2\nsize n 0..274877906944\nbuffer a n*4\nbuffer b n*4\nbuffer y n*4\n"
            "launch ew_add_f32_v1_b256 chunks n by 268435456 grid 1..ceil(count,256),1,1 block 256 lds 0 "
            "args a=buffer:a@first*4+count*4 b=buffer:b@first*4+count*4 y=buffer:y@first*4+count*4 "
            "n=scalar:count\n");
  json chunked = respond({{"id", 2}, {"family", "conv_fwd_lds_halo"}, {"arch", "gfx942"}, {"spec", {{"n", 3}}},
                          {"flavors", json::array()}, {"buffer_range", 73729}});
  std::string plan = chunked["plan"].get<std::string>();
  // the weights (73728 bytes) must fit too: two images per chunk, the third alone
  EXPECT_NE(plan.find("x=buffer:x@50176+25088 "), std::string::npos) << plan;
  EXPECT_EQ(std::count(plan.begin(), plan.end(), '\n'), 6) << plan;  // header, three buffers and two launches
  for (const json& bad : {json(0), json(-5), json(true), json(1.5), json("8")})
    EXPECT_EQ(respond({{"id", 3}, {"family", "elementwise"}, {"arch", "gfx942"}, {"spec", json::object()},
                       {"flavors", json::array()}, {"buffer_range", bad}})["error"],
              "request field 'buffer_range' must be a positive integer (bytes; test-only)")
        << bad;
}

TEST(Serve, ResolveFlavorAsTheClisDo) {
  EXPECT_EQ(respond({{"id", 1}, {"op", "resolve_flavor"}, {"name", "llvm19"}}),
            json({{"id", 1}, {"status", "ok"}, {"flavor", "llvm19"}, {"note", ""}}));
  EXPECT_EQ(respond({{"id", 2}, {"op", "resolve_flavor"}, {"name", "llvm23"}})["note"],
            "note: flavor llvm23 is not in the table; using llvm22, the newest (add a row when LLVM 23 is measured)");
  EXPECT_EQ(respond({{"id", 3}, {"op", "resolve_flavor"}, {"name", "llvm17"}})["error"],
            "unknown flavor 'llvm17' (known: llvm16, llvm19, llvm22; a newer llvmN resolves to llvm22)");
  EXPECT_EQ(respond({{"id", 4}, {"op", "resolve_flavor"}, {"name", 19}})["error"],
            "request field 'name' must be a string");
}

TEST(Serve, EmitRefusalAndErrors) {
  json ok = respond({{"id", 7}, {"family", "elementwise"}, {"arch", "gfx942"}, {"spec", json::object()},
                     {"flavors", {"llvm16", "llvm22"}}});
  EXPECT_EQ(ok["status"], "ok");
  EXPECT_EQ(ok["ll"]["llvm16"], json({{"rejected", "gfx942 needs flavor llvm19 or newer (got llvm16)"}}));
  EXPECT_TRUE(ok["ll"]["llvm22"].contains("text"));
  json refused = respond({{"id", 8}, {"family", "elementwise"}, {"arch", "gfx942"}, {"spec", {{"vec", 3}}},
                          {"flavors", {"llvm22"}}});
  EXPECT_EQ(refused, json({{"id", 8}, {"status", "rejected"}, {"reason", "vec must be one of 1, 2, 4, 8 (got 3)"}}));
  EXPECT_EQ(respond({{"id", 9}, {"family", "elementwise"}})["error"], "request lacks field 'arch'");
  EXPECT_EQ(respond({{"id", 10}, {"op", 7}})["error"], "unknown op '7'");
  EXPECT_EQ(respond({{"id", 11}, {"op", nullptr}})["error"], "unknown op 'None'");
  EXPECT_EQ(respond(json::array({1}))["id"], nullptr);
  json flavor = respond({{"id", 12}, {"family", "elementwise"}, {"arch", "gfx942"}, {"spec", json::object()},
                         {"flavors", {"llvm99"}}});
  EXPECT_EQ(flavor["error"], "UnknownFlavor: unknown flavor 'llvm99' (known: llvm16, llvm19, llvm22)");
  json iterable = respond({{"id", 13}, {"family", "elementwise"}, {"arch", "gfx942"}, {"spec", json::object()},
                           {"flavors", 5}});
  EXPECT_EQ(iterable["error"], "TypeError: 'int' object is not iterable");
  json arch = respond({{"id", 14}, {"family", "elementwise"}, {"arch", json::array({"gfx942"})},
                       {"spec", json::object()}, {"flavors", json::array()}});
  EXPECT_EQ(arch["reason"],
            "unknown arch '['gfx942']' (known: gfx90a, gfx942, gfx950, gfx1100, gfx1151, gfx1201, gfx1250)");
}

TEST(Serve, PythonStr) {
  EXPECT_EQ(python_str(json(nullptr)), "None");
  EXPECT_EQ(python_str(json(true)), "True");
  EXPECT_EQ(python_str(json(4.0)), "4.0");
  EXPECT_EQ(python_str(json(-12)), "-12");
  EXPECT_EQ(python_str(json("it's")), "it's");
  EXPECT_EQ(python_str(json::array({"it's", 1, nullptr})), "[\"it's\", 1, None]");
  EXPECT_EQ(python_str(json({{"a", false}})), "{'a': False}");
}

TEST(Serve, WideIntegersStayIntegers) {
  EXPECT_TRUE(parse_line("{\"vec\": 100000000000000000000}")["vec"].is_number_unsigned());
  EXPECT_TRUE(parse_line("{\"vec\": -100000000000000000000}")["vec"].is_number_integer());
  EXPECT_TRUE(parse_line("{\"vec\": 1e2}")["vec"].is_number_float());
  json response = respond({{"id", 1}, {"family", "elementwise"}, {"arch", "gfx942"},
                           {"spec", parse_line("{\"vec\": 100000000000000000000}")}, {"flavors", {"llvm22"}}});
  EXPECT_EQ(response["reason"], "field 'vec' must fit in 32 bits");
}

TEST(Serve, OneLineOutPerRequestLine) {
  std::istringstream in("{\"id\": 0, \"op\": \"hello\"}\n\n   \nnot json\n[1]\n");
  std::ostringstream out;
  EXPECT_EQ(serve(in, out), 0);
  std::istringstream lines(out.str());
  std::string line;
  std::vector<json> responses;
  while (std::getline(lines, line)) responses.push_back(json::parse(line));
  ASSERT_EQ(responses.size(), 3u);
  EXPECT_EQ(responses[0]["engine"], "cpp");
  EXPECT_EQ(responses[1]["id"], nullptr);
  EXPECT_EQ(responses[1]["status"], "error");
  EXPECT_EQ(responses[1]["error"].get<std::string>().rfind("malformed request line: ", 0), 0u);
  EXPECT_EQ(responses[2]["error"], "request must be a JSON object");
}

}  // namespace
}  // namespace kemit::serve
