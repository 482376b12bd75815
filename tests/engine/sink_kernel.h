// The kitchen-sink kernel of fixtures/regen_sink.py, built with the C++ builder in the same op
// order (one statement per op: C++ argument order is unspecified, ids follow creation order).
#pragma once
#include <fstream>
#include <sstream>
#include <string>

#include "kemit/ir/builder.h"

namespace kemit::test {

inline ir::Kernel sink_kernel() {
  using ir::Value;
  ir::Builder b("sink", "gfx90a");
  b.attr("waves_per_eu", "2");
  b.attr("flat_work_group_size", "1,128");
  ir::Type i32 = ir::scalar("i32"), f32 = ir::scalar("f32"), bf16 = ir::scalar("bf16");
  ir::Type v4f32 = ir::vector(f32, 4), v4bf16 = ir::vector(bf16, 4);
  Value src = b.param("src", ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value dst = b.param("dst", ir::pointer("global"), 0, false, /*nocapture=*/true, false, /*writeonly=*/true);
  Value n = b.param("n", i32);
  Value tile = b.lds("tile", v4bf16, 32, 8);
  Value tid = b.workitem_id("y");
  Value groups = b.num_workgroups("z");
  Value uniform = b.readfirstlane(groups);
  Value zero = b.const_int(i32, 0);
  Value one = b.const_int(i32, 1);
  Value shifted = b.shl(tid, one, {"nuw"});
  Value word = b.bit_or(shifted, one, {"disjoint"});
  Value wide = b.zext(word, ir::scalar("i64"), /*nneg=*/true);
  Value narrow = b.trunc(wide, ir::scalar("i16"));
  Value back = b.sext(narrow, i32);
  Value q = b.udiv(back, uniform);
  Value masked = b.bit_and(q, n);
  Value r = b.urem(masked, uniform);
  Value acc0 = b.const_float(v4f32, 0.5);
  auto body = [&](const Value& i, const std::vector<Value>& iters) {
    Value address = b.ptr_add(src, i, bf16);
    Value v = b.load(v4bf16, address, 8);
    Value w = b.fpext(v, v4f32);
    Value low = b.const_float(v4f32, -2.0);
    Value clamped = b.fmin(w, low);
    Value s = b.fadd(iters[0], clamped);
    Value rounded = b.fptrunc(s, v4bf16);
    Value slot = b.ptr_add(tile, i, v4bf16);
    b.store(rounded, slot, 8);
    return std::vector<Value>{s};
  };
  Value total = b.for_loop(zero, r, one, {acc0}, body).at(0);
  b.barrier();
  Value square = b.fmul(total, total);
  Value difference = b.fsub(square, total);
  Value negated = b.fneg(total);
  Value small = b.fcmp("olt", difference, negated);
  Value rest = b.sub(n, r, {"nsw"});
  Value scaled = b.mul(q, one);
  Value lane_ok = b.icmp("ne", rest, scaled);
  auto then = [&] {
    Value exponential = b.exp(total);
    Value ratio = b.fdiv(total, exponential);
    Value chosen = b.select(small, total, ratio);
    Value rounded = b.fptrunc(chosen, v4bf16);
    Value address = b.ptr_add(dst, r, bf16);
    b.store(rounded, address, 8);
    Value as_half = b.sitofp(r, ir::scalar("f16"));
    Value first = b.ptr_add(dst, zero, ir::scalar("f16"));
    b.store(as_half, first, 2);
  };
  auto otherwise = [&] {
    Value h = b.const_float(ir::scalar("f16"), 1.5);
    Value widened = b.fpext(h, f32);
    Value factor = b.const_float(f32, -0.25);
    Value addend = b.const_float(f32, 3.0);
    Value fused = b.fma(widened, factor, addend);
    Value integer = b.fptosi(fused, i32);
    Value address = b.ptr_add(dst, one, i32);
    b.store(integer, address, 4);
    Value slot = b.ptr_add(tile, r, i32);
    Value counted = b.atomic_add(slot, one, "monotonic", "workgroup", 4);
    Value first = b.ptr_add(dst, zero, i32);
    b.store(counted, first, 4);
  };
  b.if_then_else(lane_ok, then, otherwise);
  return b.finish();
}

inline std::string read_fixture(const std::string& name) {
  std::ifstream file(std::string(KEMIT_ENGINE_FIXTURES) + "/" + name, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace kemit::test
