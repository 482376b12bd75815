// IR types: construction, the refusal texts (shared with the Python engine), sizes, and
// type_text / parse_type as inverses.
#include <gtest/gtest.h>

#include "kemit/ir/types.h"

namespace kemit::ir {
namespace {

template <class F>
std::string type_error_of(F&& f) {
  try {
    f();
  } catch (const TypeError& error) {
    return error.what();
  }
  return "no error";
}

TEST(Types, ScalarsVectorsPointers) {
  EXPECT_EQ(type_text(scalar("bf16")), "bf16");
  EXPECT_EQ(type_text(vector(scalar("f16"), 4)), "<4 x f16>");
  EXPECT_EQ(type_text(pointer("lds")), "ptr.lds");
  EXPECT_EQ(with_lanes(scalar("f32"), 1), scalar("f32"));
  EXPECT_EQ(with_lanes(scalar("f32"), 8), vector(scalar("f32"), 8));
  EXPECT_EQ(element_type(vector(scalar("i16"), 2)), scalar("i16"));
  EXPECT_EQ(lanes(vector(scalar("i16"), 2)), 2);
  EXPECT_EQ(lanes(pointer("global")), 1);
}

TEST(Types, Predicates) {
  EXPECT_TRUE(is_float(vector(scalar("bf16"), 2)));
  EXPECT_FALSE(is_float(scalar("i32")));
  EXPECT_TRUE(is_int(scalar("i1")));
  EXPECT_FALSE(is_int(pointer("global")));
  EXPECT_FALSE(is_float(pointer("global")));
}

TEST(Types, ByteSizes) {
  EXPECT_EQ(byte_size(scalar("i1")), 1);
  EXPECT_EQ(byte_size(scalar("bf16")), 2);
  EXPECT_EQ(byte_size(vector(scalar("f16"), 8)), 16);
  EXPECT_EQ(byte_size(pointer("global")), 8);
  EXPECT_EQ(byte_size(pointer("constant")), 8);
  EXPECT_EQ(byte_size(pointer("lds")), 4);
  EXPECT_EQ(byte_size(pointer("private")), 4);
}

TEST(Types, RefusalTexts) {
  EXPECT_EQ(type_error_of([] { scalar("f64"); }), "unknown scalar type 'f64' (known: i1, i16, i32, i64, f16, bf16, f32)");
  EXPECT_EQ(type_error_of([] { vector(pointer("lds"), 4); }), "vector elements must be scalars (got ptr.lds)");
  EXPECT_EQ(type_error_of([] { vector(scalar("f32"), 17); }), "vector length must be between 2 and 16 (got 17)");
  EXPECT_EQ(type_error_of([] { vector(scalar("f32"), 1); }), "vector length must be between 2 and 16 (got 1)");
  EXPECT_EQ(type_error_of([] { pointer("shared"); }),
            "unknown address space 'shared' (known: global, lds, constant, private)");
}

TEST(Types, ParseTypeIsTheInverseOfTypeText) {
  for (const Type& t : {scalar("i1"), scalar("bf16"), vector(scalar("f32"), 16), vector(scalar("i64"), 2),
                        pointer("global"), pointer("private")})
    EXPECT_EQ(parse_type(type_text(t)), t) << type_text(t);
  EXPECT_EQ(parse_type("<0004 x f32>"), vector(scalar("f32"), 4));  // Python's int() reads leading zeros
}

TEST(Types, ParseTypeRefusals) {
  EXPECT_EQ(type_error_of([] { parse_type("<x x f32>"); }), "malformed vector type '<x x f32>'");
  EXPECT_EQ(type_error_of([] { parse_type("<4 x f64>"); }), "unknown scalar type 'f64' (known: i1, i16, i32, i64, f16, bf16, f32)");
  EXPECT_EQ(type_error_of([] { parse_type("<99999999999 x f32>"); }),
            "vector length must be between 2 and 16 (got 99999999999)");
  EXPECT_EQ(type_error_of([] { parse_type("ptr.shared"); }),
            "unknown address space 'shared' (known: global, lds, constant, private)");
}

}  // namespace
}  // namespace kemit::ir
