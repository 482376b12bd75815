// The canonical printer: the kitchen-sink kernel prints the same bytes as the Python engine's
// (fixtures/sink.canonical), and the small pieces print as the grammar says.
#include <gtest/gtest.h>

#include "kemit/ir/printer.h"
#include "sink_kernel.h"

namespace kemit::ir {
namespace {

TEST(Printer, KitchenSinkMatchesThePythonEngine) {
  std::string expected = test::read_fixture("sink.canonical");
  ASSERT_FALSE(expected.empty()) << "fixture missing: run tests/engine/fixtures/regen_sink.py";
  EXPECT_EQ(print_kernel(test::sink_kernel()), expected);
}

TEST(Printer, AttrsAreSortedFlagsBareValuesAfterEquals) {
  Attrs attrs = {{"readonly", Attr::flag()}, {"align", Attr::of(int64_t{16})}, {"element", Attr::of("bf16")}};
  EXPECT_EQ(attrs_text(attrs), " {align=16, element=bf16, readonly}");
  EXPECT_EQ(attrs_text({}), "");
}

TEST(Printer, OpsAndRegions) {
  Builder b("k", "gfx1100");
  Value n = b.param("n", scalar("i32"));
  Value c = b.icmp("sgt", n, n);
  b.if_then(c, [&] { b.barrier(); });
  Kernel kernel = b.finish();
  EXPECT_EQ(print_kernel(kernel),
            "; kemit canonical IR 1\n"
            "kernel @k {\n"
            "  arch gfx1100\n"
            "  param %0 n : i32\n"
            "  %1 = icmp %0, %0 {pred=sgt} : i1\n"
            "  if %1 {\n"
            "    barrier\n"
            "  }\n"
            "}\n");
  EXPECT_EQ(values_text({n, c}), "%0, %1");
  EXPECT_EQ(op_text(kernel.body.ops[0]), "%1 = icmp %0, %0 {pred=sgt} : i1");
}

}  // namespace
}  // namespace kemit::ir
