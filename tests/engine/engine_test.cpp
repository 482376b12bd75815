// The engine's front door (kemit/engine.h): flavors gated per section, an unknown family or flavor
// an error, the family list the registry's.
#include <gtest/gtest.h>

#include "kemit/engine.h"
#include "kemit/families/registry.h"

namespace kemit {
namespace {

using nlohmann::json;

TEST(Engine, FlavorGatesArePerSection) {
  EmitResult result = emit("elementwise", "gfx950", {{"op", "fma"}}, {"llvm16", "llvm19", "llvm22"});
  ASSERT_FALSE(result.rejected);
  EXPECT_EQ(result.kernel_name, "ew_fma_f32_v1_b256");
  ASSERT_EQ(result.ll.size(), 3u);
  EXPECT_EQ(result.ll[0].reason, "gfx950 needs flavor llvm22 or newer (got llvm16)");
  EXPECT_EQ(result.ll[1].reason, "gfx950 needs flavor llvm22 or newer (got llvm19)");
  EXPECT_FALSE(result.ll[2].rejected);
  EXPECT_EQ(result.ll[2].text.rfind("; kemit kernel ew_fma_f32_v1_b256 for gfx950 at llvm22\n", 0), 0u);
}

TEST(Engine, UnknownFamilyOrFlavorIsAnError) {
  EXPECT_THROW(emit("nope", "gfx942", json::object(), {"llvm22"}), std::invalid_argument);
  EXPECT_THROW(emit("elementwise", "gfx942", json::object(), {"llvm99"}), std::invalid_argument);
  EXPECT_EQ(family_names(), families::family_names());
}

}  // namespace
}  // namespace kemit
