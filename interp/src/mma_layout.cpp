// Fragment layouts of the matrix-core instructions (see mma_layout.h and docs/ir.md).
//
// A lane l of a wave has group g = l / M and index i = l % M. Its A fragment is row i of A at
// k = g * stride + offset_p + j for piece p and j < piece length (pieces concatenated); its B
// fragment is column i of B at the same k; accumulator element e is C[row(e) + factor * g][i].
#include "mma_layout.h"

#include <map>
#include <set>
#include <stdexcept>

#include "kemit/interp/interp.h"

namespace kemit::interp {
namespace {

struct Kind {
  int m, n, k;
  int stride;                // k stride per lane group (0: every group holds the whole k range)
  std::vector<int> offsets;  // piece offsets in k
  int length;                // piece length
  int factor;                // accumulator row step per lane group
};

const std::map<std::string, Kind> KINDS = {
    {"mfma_32x32x8", {32, 32, 8, 4, {0}, 4, 4}},    {"mfma_16x16x16", {16, 16, 16, 4, {0}, 4, 4}},
    {"mfma_16x16x32", {16, 16, 32, 8, {0}, 8, 4}},  {"wmma_gfx11", {16, 16, 16, 0, {0}, 16, 1}},
    {"wmma_gfx12", {16, 16, 16, 4, {0, 8}, 4, 8}},     {"wmma_gfx1250", {16, 16, 32, 8, {0, 16}, 8, 8}},
    {"mfma_32x32x16", {32, 32, 16, 8, {0}, 8, 4}},  {"wmma_gfx12_iu8", {16, 16, 16, 8, {0}, 8, 8}},
};

// The lane-independent part of accumulator element e's row.
int static_row(const std::string& kind, int e) {
  if (kind == "mfma_32x32x8" || kind == "mfma_32x32x16") return e / 4 * 8 + e % 4;
  if (kind == "wmma_gfx11") return 2 * e;
  return e;
}

MmaLayout make(const std::string& instr, const std::string& kind_name, Scalar operand, int wave, int acc_width) {
  const Kind& kind = KINDS.at(kind_name);
  MmaLayout layout;
  layout.instr = instr;
  layout.m = kind.m, layout.n = kind.n, layout.k = kind.k, layout.wave = wave;
  layout.operand_kind = operand;
  layout.operand_width = static_cast<int>(kind.offsets.size()) * kind.length;
  layout.accumulator_width = acc_width;
  for (int lane = 0; lane < wave; ++lane) {
    int group = lane / kind.m, index = lane % kind.m;
    for (int e = 0; e < layout.operand_width; ++e) {
      int k = group * kind.stride + kind.offsets[e / kind.length] + e % kind.length;
      layout.a.emplace_back(index, k);
      layout.b.emplace_back(k, index);
    }
    for (int e = 0; e < acc_width; ++e) layout.c.emplace_back(static_row(kind_name, e) + kind.factor * group, index);
  }
  for (auto [row, col] : layout.a) layout.a_at.push_back(row * kind.k + col);
  for (auto [row, col] : layout.b) layout.b_at.push_back(row * kind.n + col);
  for (auto [row, col] : layout.c) layout.c_at.push_back(row * kind.n + col);
  const auto m = static_cast<size_t>(kind.m), n = static_cast<size_t>(kind.n), k = static_cast<size_t>(kind.k);
  if (m * k > MMA_MAX_OPERAND || k * n > MMA_MAX_OPERAND || m * n > MMA_MAX_D)
    throw std::logic_error("mma layout " + instr + " is larger than the matrix op's stack arrays");
  std::set<std::pair<int, int>> c_places(layout.c.begin(), layout.c.end());
  layout.c_replicated = c_places.size() != layout.c.size();
  return layout;
}

// One operand's elements by their flat place `at` ([lane * width + element]): the first holder of
// each place gives its cell, later ones are replicas.
MmaGather gather_of(const MmaLayout& layout, const std::vector<int>& at, size_t count) {
  const int width = layout.operand_width;
  const int per = layout.int8_per_element ? layout.int8_per_element : layout.fp8 != Fp8::none ? 8 : 1;
  MmaGather out;
  out.cell.assign(count, 0);
  out.shift.assign(count, 0);
  std::vector<bool> seen(count, false);
  for (int lane = 0; lane < layout.wave; ++lane)
    for (int e = 0; e < width; ++e) {
      const auto place = static_cast<uint32_t>(at[static_cast<size_t>(lane) * width + e]);
      const auto cell = static_cast<uint32_t>(e / per * layout.wave + lane);
      const auto shift = static_cast<uint8_t>(per > 1 ? 8 * (e % per) : 0);
      if (seen[place]) {
        out.replicas.push_back({place, cell, shift});
        continue;
      }
      seen[place] = true;
      out.cell[place] = cell;
      out.shift[place] = shift;
    }
  for (bool held : seen)
    if (!held) throw std::logic_error("mma layout " + layout.instr + " leaves an element of an operand to no lane");
  return out;
}

// The tables a matrix op reads (a_gather, b_gather, d_of_cell), once the layout is complete.
void add_gathers(MmaLayout& layout) {
  layout.a_gather = gather_of(layout, layout.a_at, static_cast<size_t>(layout.m) * layout.k);
  layout.b_gather = gather_of(layout, layout.b_at, static_cast<size_t>(layout.k) * layout.n);
  const int per_lane = layout.accumulator_width;
  layout.d_of_cell.resize(static_cast<size_t>(per_lane) * layout.wave);
  for (int e = 0; e < per_lane; ++e)
    for (int lane = 0; lane < layout.wave; ++lane)
      layout.d_of_cell[static_cast<size_t>(e) * layout.wave + lane] =
          static_cast<uint16_t>(layout.c_at[static_cast<size_t>(lane) * per_lane + e]);
}

std::vector<MmaLayout> build_layouts() {
  std::vector<MmaLayout> out;
  for (const char* dtype : {"f16", "bf16"}) {
    Scalar kind = std::string(dtype) == "f16" ? Scalar::f16 : Scalar::bf16;
    std::string suffix = std::string("_") + dtype;
    out.push_back(make("mfma_f32_32x32x8" + suffix, "mfma_32x32x8", kind, 64, 16));
    out.push_back(make("mfma_f32_16x16x16" + suffix, "mfma_16x16x16", kind, 64, 4));
    out.push_back(make("wmma_gfx11_f32_16x16x16" + suffix, "wmma_gfx11", kind, 32, 8));
    out.push_back(make("wmma_gfx12_f32_16x16x16" + suffix, "wmma_gfx12", kind, 32, 8));
    out.push_back(make("wmma_gfx1250_f32_16x16x32" + suffix, "wmma_gfx1250", kind, 32, 8));
  }
  out.push_back(make("mfma_f32_16x16x32_bf16", "mfma_16x16x32", Scalar::bf16, 64, 4));
  const std::pair<const char*, Fp8> fp8_instructions[] = {{"mfma_f32_16x16x32_fp8_fnuz", Fp8::e4m3_fnuz},
                                                          {"mfma_f32_16x16x32_bf8_fnuz", Fp8::e5m2_fnuz},
                                                          {"mfma_f32_16x16x32_fp8_ocp", Fp8::e4m3_ocp},
                                                          {"mfma_f32_16x16x32_bf8_ocp", Fp8::e5m2_ocp}};
  for (const auto& [instr, format] : fp8_instructions) {
    out.push_back(make(instr, "mfma_16x16x32", Scalar::i64, 64, 4));
    out.back().fp8 = format;
  }
  // The integer instructions: (name, layout kind, operand element, bytes to it, wave, accumulators).
  struct Int8Instruction {
    const char* instr;
    const char* kind;
    Scalar operand;
    int per_element, wave, accumulators;
  };
  const Int8Instruction int8_instructions[] = {
      {"mfma_i32_32x32x8_i8", "mfma_32x32x8", Scalar::i32, 4, 64, 16},
      {"mfma_i32_16x16x16_i8", "mfma_16x16x16", Scalar::i32, 4, 64, 4},
      {"mfma_i32_32x32x16_i8", "mfma_32x32x16", Scalar::i64, 8, 64, 16},
      {"mfma_i32_16x16x32_i8", "mfma_16x16x32", Scalar::i64, 8, 64, 4},
      {"wmma_gfx11_i32_16x16x16_iu8", "wmma_gfx11", Scalar::i32, 4, 32, 8},
      {"wmma_gfx12_i32_16x16x16_iu8", "wmma_gfx12_iu8", Scalar::i32, 4, 32, 8}};
  for (const auto& entry : int8_instructions) {
    out.push_back(make(entry.instr, entry.kind, entry.operand, entry.wave, entry.accumulators));
    out.back().int8_per_element = entry.per_element;
  }
  for (auto& layout : out) add_gathers(layout);
  return out;
}

}  // namespace

const std::vector<MmaLayout>& mma_layouts() {
  static const std::vector<MmaLayout> layouts = build_layouts();
  return layouts;
}

int find_mma_layout(const std::string& instr) {
  const auto& layouts = mma_layouts();
  for (size_t i = 0; i < layouts.size(); ++i)
    if (layouts[i].instr == instr) return static_cast<int>(i);
  return -1;
}

MmaFragments mma_fragments(const std::string& instr) {
  int found = find_mma_layout(instr);
  if (found < 0) throw InterpError("the interpreter has no layout for mma instruction '" + instr + "'");
  const MmaLayout& layout = mma_layouts()[static_cast<size_t>(found)];
  auto per_lane = [&](const std::vector<std::pair<int, int>>& places, int width) {
    std::vector<std::vector<std::pair<int, int>>> lanes;
    for (size_t at = 0; at < places.size(); at += static_cast<size_t>(width))
      lanes.emplace_back(places.begin() + static_cast<std::ptrdiff_t>(at),
                         places.begin() + static_cast<std::ptrdiff_t>(at) + width);
    return lanes;
  };
  return {per_lane(layout.a, layout.operand_width), per_lane(layout.b, layout.operand_width),
          per_lane(layout.c, layout.accumulator_width)};
}

}  // namespace kemit::interp
