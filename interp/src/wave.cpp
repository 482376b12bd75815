// The executor of one wave (see wave.h): ops run one at a time for every active lane, lanes in
// lockstep; structured control flow narrows the lane mask (docs/ir.md, "Meaning").
#include "wave.h"

#include "race.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace kemit::interp {
namespace {

// A float kind as a type, so that a lane loop made for it has the kind constant.
using F16 = std::integral_constant<Scalar, Scalar::f16>;
using BF16 = std::integral_constant<Scalar, Scalar::bf16>;
using F32 = std::integral_constant<Scalar, Scalar::f32>;

int lane_count(uint64_t mask) { return __builtin_popcountll(mask); }

}  // namespace

std::string group_text(const std::array<int64_t, 3>& g) {
  return "(" + std::to_string(g[0]) + "," + std::to_string(g[1]) + "," + std::to_string(g[2]) + ")";
}

Wave::Wave(const Program& program, Memory& memory, RunStats& stats, const Place& place, std::function<void()> barrier,
           std::vector<uint64_t>& regs)
    : program(program), memory(memory), stats(stats), place(place), barrier_hook(std::move(barrier)),
      width(program.wave_size), all_lanes(width_mask_of_bits(width)), regs(regs) {}

void Wave::fail(const Instr& in, int lane, const std::string& message) const {
  std::string where = " (lane " + std::to_string(lane) + " of wave " + std::to_string(place.wave) + ", workgroup " +
                      group_text(place.group) + ", kernel @" + program.kernel + ")";
  std::string label = op_label(*in.op);
  throw OpError(label + ": " + message + where, label, int64_t(place.wave) * width + lane, message);
}

void Wave::run(const std::vector<uint64_t>& param_values) {
  for (size_t i = 0; i < program.params.size(); ++i)
    for (int lane = 0; lane < width; ++lane) reg(program.params[i].value.slot, lane) = param_values[i];
  for (const auto& buffer : program.lds)
    for (int lane = 0; lane < width; ++lane) reg(buffer.value.slot, lane) = uint64_t(buffer.region) << REGION_SHIFT;
  int workitems = place.block[0] * place.block[1] * place.block[2];
  uint64_t mask = 0;
  for (int lane = 0; lane < width; ++lane)
    if (place.wave * width + lane < workitems) mask |= uint64_t{1} << lane;
  block(program.body, mask);
}

void Wave::block(const Block& ops, uint64_t mask) {
  const int lanes = lane_count(mask);  // a block runs under one mask
  for (const auto& in : ops) {
    stats.wave_instructions += 1;
    stats.lane_instructions += lanes;
    exec(in, mask);
  }
}

void Wave::exec(const Instr& in, uint64_t mask) {
  switch (in.code) {
    case Code::constant:
      for (int e = 0; e < in.result.width; ++e) {
        uint64_t* r = lane_row(in.result.slot + e);
        uint64_t value = in.data[e];
        for_lanes(mask, [&](int l) { r[l] = value; });
      }
      return;
    case Code::workitem_id: case Code::workgroup_id: case Code::num_workgroups:
      return special(in, mask);
    case Code::add: case Code::sub: case Code::mul: case Code::udiv: case Code::urem: case Code::shl:
    case Code::lshr: case Code::bit_and: case Code::bit_or:
      return int_binary(in, mask);
    case Code::fadd: case Code::fsub: case Code::fmul: case Code::fdiv: case Code::fmax: case Code::fmin:
    case Code::fma: case Code::fneg: case Code::exp: case Code::sqrt:
      return float_op(in, mask);
    case Code::icmp: case Code::fcmp:
      return compare(in, mask);
    case Code::select:
      return select(in, mask);
    case Code::zext: case Code::sext: case Code::trunc: case Code::fpext: case Code::fptrunc: case Code::sitofp:
    case Code::fptosi:
      return cast(in, mask);
    case Code::ptr_add:
      return ptr_add(in, mask);
    case Code::load:
      return load(in, mask);
    case Code::store:
      return store(in, mask);
    case Code::atomic_add:
      return atomic_add(in, mask);
    case Code::barrier:
      barrier_hook();
      return;
    case Code::extract_element: case Code::insert_element: case Code::shuffle:
      return vector_op(in, mask);
    case Code::readfirstlane: case Code::bpermute: case Code::update_dpp:
      return cross_lane(in, mask);
    case Code::mma:
      return mma(in, mask);
    case Code::for_loop:
      return for_loop(in, mask);
    case Code::if_then:
      return if_then(in, mask);
    case Code::yield_values:  // never compiled: a for's yields are its Instr's yields
      break;
  }
  fail(in, 0, "the interpreter cannot run this op");
}

// iv = lo; while iv < hi (signed): body; iv += step. Each lane leaves on its own; the wave loops
// while any lane is active. Results are the last yields (the inits for a lane with no trip).
void Wave::for_loop(const Instr& in, uint64_t mask) {
  const Operand &lo = in.in[0], &hi = in.in[1], &step = in.in[2];
  const Operand& iv = in.args[0];
  for_lanes(mask, [&](int lane) {
    reg(iv.slot, lane) = reg(lo.slot, lane);
    for (size_t i = 0; i < in.results.size(); ++i)
      for (int e = 0; e < in.args[i + 1].width; ++e) reg(in.args[i + 1].slot + e, lane) = reg(in.in[3 + i].slot + e, lane);
  });
  // The lanes still in the loop: a compare per lane without a branch, then the step check over them.
  auto running = [&](uint64_t lanes) {
    const uint64_t *ivs = lane_row(iv.slot), *his = lane_row(hi.slot), *steps = lane_row(step.slot);
    uint64_t active = 0;
    for_lanes(lanes, [&](int l) {
      active |= uint64_t{static_cast<int32_t>(ivs[l]) < static_cast<int32_t>(his[l])} << l;
    });
    require(active, [&](int l) { return static_cast<int32_t>(steps[l]) <= 0; }, [&](int lane) {
      fail(in, lane, "step " + std::to_string(static_cast<int32_t>(steps[lane])) + " never ends the loop");
    });
    return active;
  };
  // The yields' values, a row of lanes per element: every yield is read before any iter is written
  // (a yield may name an iter).
  size_t elements = 0;
  for (const auto& y : in.yields) elements += static_cast<size_t>(y.width);
  // One scratch per wave: a nested loop's use of it ends before this loop's begins or resumes.
  if (carried.size() < elements * static_cast<size_t>(width)) carried.resize(elements * static_cast<size_t>(width));
  for (uint64_t active = running(mask); active; active = running(active)) {
    block(in.bodies[0], active);
    uint64_t* row = carried.data();
    for (const auto& y : in.yields)
      for (int e = 0; e < y.width; ++e, row += width) {
        const uint64_t* from = lane_row(y.slot + e);
        for_lanes(active, [&](int l) { row[l] = from[l]; });
      }
    row = carried.data();
    for (size_t i = 0; i < in.yields.size(); ++i)
      for (int e = 0; e < in.args[i + 1].width; ++e, row += width) {
        uint64_t* to = lane_row(in.args[i + 1].slot + e);
        for_lanes(active, [&](int l) { to[l] = row[l]; });
      }
    uint64_t* ivs = lane_row(iv.slot);
    const uint64_t* steps = lane_row(step.slot);
    for_lanes(active, [&](int l) { ivs[l] = static_cast<uint32_t>(ivs[l]) + static_cast<uint32_t>(steps[l]); });
  }
  for_lanes(mask, [&](int lane) {
    for (size_t i = 0; i < in.results.size(); ++i)
      for (int e = 0; e < in.results[i].width; ++e) reg(in.results[i].slot + e, lane) = reg(in.args[i + 1].slot + e, lane);
  });
}

// Lanes where the condition holds run `then`, the others `else`; a region no lane enters is
// skipped, as the hardware skips it when exec is zero (its barriers included).
void Wave::if_then(const Instr& in, uint64_t mask) {
  uint64_t then_mask = 0;
  for_lanes(mask, [&](int lane) { then_mask |= (reg(in.in[0].slot, lane) & 1) << lane; });
  uint64_t else_mask = mask & ~then_mask;
  if (then_mask) block(in.bodies[0], then_mask);
  if (in.bodies.size() == 2 && else_mask) block(in.bodies[1], else_mask);
}

void Wave::special(const Instr& in, uint64_t mask) {
  int dim = static_cast<int>(in.imm);
  for_lanes(mask, [&](int lane) {
    uint64_t value;
    if (in.code == Code::workgroup_id) {
      value = place.group[dim];
    } else if (in.code == Code::num_workgroups) {
      value = place.grid[dim];
    } else {
      int t = place.wave * width + lane;
      int ids[3] = {t % place.block[0], (t / place.block[0]) % place.block[1], t / (place.block[0] * place.block[1])};
      value = ids[dim];
    }
    reg(in.result.slot, lane) = value;
  });
}

// Integer ops: one loop over the lanes per op and element, the wrap checks in a second loop only
// when the op makes a promise. The failing lane reported is the lowest, nuw before nsw. The width
// is a template argument, so that shifts and masks are constants and the loops vectorize.
void Wave::int_binary(const Instr& in, uint64_t mask) {
  switch (bits_of(in.result.kind)) {
    case 1: return int_binary_of<1>(in, mask);
    case 16: return int_binary_of<16>(in, mask);
    case 32: return int_binary_of<32>(in, mask);
    default: return int_binary_of<64>(in, mask);
  }
}

template <int bits> void Wave::int_binary_of(const Instr& in, uint64_t mask) {
  constexpr uint64_t wm = width_mask_of_bits(bits);
  constexpr int sign = bits - 1;
  auto sx = [](uint64_t v) { return sign_extend_bits(bits, v); };
  for (int e = 0; e < in.result.width; ++e) {
    const uint64_t* a = lane_row(in.in[0].slot + e);
    const uint64_t* b = lane_row(in.in[1].slot + e);
    uint64_t* r = lane_row(in.result.slot + e);
    // unsigned_wrap(lane), signed_wrap(lane): whether the exact result left the type.
    auto check = [&](auto unsigned_wrap, auto signed_wrap) {
      if (!in.nuw && !in.nsw) return;
      const uint64_t nuw = in.nuw ? ~uint64_t{0} : 0, nsw = in.nsw ? ~uint64_t{0} : 0;
      require(mask, [&](int l) { return (nuw & unsigned_wrap(l)) | (nsw & signed_wrap(l)); }, [&](int lane) {
        if (in.nuw && unsigned_wrap(lane))
          fail(in, lane, "nuw promise broken: unsigned wrap of " + std::to_string(a[lane]) + " and " + std::to_string(b[lane]));
        fail(in, lane, "nsw promise broken: signed wrap of " + std::to_string(sx(a[lane])) + " and " +
                           std::to_string(sx(b[lane])));
      });
    };
    // add and sub wrap by their carry or borrow (the operands are zero-extended, so for less than 64
    // bits the bits above the type's) and, signed, when the result's sign differs from the operands'
    // (add: both; sub: the first's, the two having differed): bit operations, no branch or wide type.
    auto add_wraps = [&] {
      check([&](int l) -> uint64_t { return bits < 64 ? (a[l] + b[l]) >> (bits & 63) : ((a[l] + b[l]) & wm) < a[l]; },
            [&](int l) {
              const uint64_t sum = (a[l] + b[l]) & wm;
              return (((a[l] ^ sum) & (b[l] ^ sum)) >> sign) & 1;
            });
    };
    auto sub_wraps = [&] {
      check([&](int l) -> uint64_t { return bits < 64 ? (a[l] - b[l]) >> 63 : a[l] < b[l]; }, [&](int l) {
        const uint64_t difference = (a[l] - b[l]) & wm;
        return (((a[l] ^ b[l]) & (a[l] ^ difference)) >> sign) & 1;
      });
    };
    // mul: the exact product, in a type that holds it (64 bits for operands of up to 32, 128 for
    // 64-bit ones), against the type's range.
    auto mul_wraps = [&](auto exact_signed, auto exact_unsigned) {
      using S = decltype(exact_signed);
      using U = decltype(exact_unsigned);
      const S lowest = -(S{1} << sign), highest = (S{1} << sign) - 1;
      auto outside = [&](S exact) { return (exact < lowest) | (exact > highest); };
      check([&](int l) { return U{a[l]} * b[l] > wm; }, [&](int l) { return outside(S{sx(a[l])} * sx(b[l])); });
    };
    auto shift_in_range = [&] {
      require(mask, [&](int l) { return b[l] >= static_cast<uint64_t>(bits); }, [&](int lane) {
        fail(in, lane, "shift by " + std::to_string(b[lane]) + " >= " + std::to_string(bits) + " bits is poison");
      });
    };
    switch (in.code) {
      case Code::add:
        add_wraps();
        for_lanes(mask, [&](int l) { r[l] = (a[l] + b[l]) & wm; });
        break;
      case Code::sub:
        sub_wraps();
        for_lanes(mask, [&](int l) { r[l] = (a[l] - b[l]) & wm; });
        break;
      case Code::mul:
        if constexpr (bits < 64) mul_wraps(int64_t{}, uint64_t{});
        else mul_wraps(__int128{}, static_cast<unsigned __int128>(0));
        for_lanes(mask, [&](int l) { r[l] = (a[l] * b[l]) & wm; });
        break;
      case Code::udiv: case Code::urem:
        require(mask, [&](int l) { return b[l] == 0; }, [&](int lane) { fail(in, lane, "division by zero"); });
        if (in.code == Code::udiv) for_lanes(mask, [&](int l) { r[l] = a[l] / b[l]; });
        else for_lanes(mask, [&](int l) { r[l] = a[l] % b[l]; });
        break;
      case Code::shl:
        shift_in_range();
        check([&](int l) { return ((a[l] << b[l]) & wm) >> b[l] != a[l]; },
              [&](int l) { return sx((a[l] << b[l]) & wm) >> b[l] != sx(a[l]); });
        for_lanes(mask, [&](int l) { r[l] = (a[l] << b[l]) & wm; });
        break;
      case Code::lshr:
        shift_in_range();
        for_lanes(mask, [&](int l) { r[l] = a[l] >> b[l]; });
        break;
      case Code::bit_and:
        for_lanes(mask, [&](int l) { r[l] = a[l] & b[l]; });
        break;
      default:  // bit_or
        if (in.flag)
          require(mask, [&](int l) { return (a[l] & b[l]) != 0; }, [&](int l) {
            fail(in, l, "disjoint operands share set bits (" + std::to_string(a[l]) + ", " + std::to_string(b[l]) + ")");
          });
        for_lanes(mask, [&](int l) { r[l] = a[l] | b[l]; });
        break;
    }
  }
}

namespace {

// fmax / fmin as the IR means them: a NaN operand gives the other one.
template <class T> T max_of(T a, T b) { return a != a ? b : b != b ? a : (a > b ? a : b); }
template <class T> T min_of(T a, T b) { return a != a ? b : b != b ? a : (a < b ? a : b); }

}  // namespace

// f32 runs in float: each of these is correctly rounded either way (a double holds the exact
// sum's correct rounding to f32 / f16 / bf16, 53 >= 2 * 24 + 2 bits), so both give the same bits.
// f16 and bf16 (and exp, whose f32 result is the double's rounded) run through doubles.
void Wave::float_op(const Instr& in, uint64_t mask) {
  Scalar kind = in.result.kind;
  for (int e = 0; e < in.result.width; ++e) {
    const uint64_t* a = lane_row(in.in[0].slot + e);
    const uint64_t* b = in.in.size() > 1 ? lane_row(in.in[1].slot + e) : nullptr;
    const uint64_t* c = in.in.size() > 2 ? lane_row(in.in[2].slot + e) : nullptr;
    uint64_t* r = lane_row(in.result.slot + e);
    if (in.code == Code::fneg) {
      uint64_t sign = uint64_t{1} << (bits_of(kind) - 1);
      for_lanes(mask, [&](int l) { r[l] = a[l] ^ sign; });
      continue;
    }
    if (kind == Scalar::f32 && in.code != Code::exp) {
      auto f32 = [&](auto op) { for_lanes(mask, [&](int l) { r[l] = bits_of_f32(op(l)); }); };
      switch (in.code) {
        case Code::fadd: f32([&](int l) { return f32_of(a[l]) + f32_of(b[l]); }); break;
        case Code::fsub: f32([&](int l) { return f32_of(a[l]) - f32_of(b[l]); }); break;
        case Code::fmul: f32([&](int l) { return f32_of(a[l]) * f32_of(b[l]); }); break;
        case Code::fdiv: f32([&](int l) { return f32_of(a[l]) / f32_of(b[l]); }); break;
        case Code::fmax: f32([&](int l) { return max_of(f32_of(a[l]), f32_of(b[l])); }); break;
        case Code::fmin: f32([&](int l) { return min_of(f32_of(a[l]), f32_of(b[l])); }); break;
        case Code::sqrt: f32([&](int l) { return std::sqrt(f32_of(a[l])); }); break;
        default: f32([&](int l) { return std::fmaf(f32_of(a[l]), f32_of(b[l]), f32_of(c[l])); }); break;  // fma
      }
      continue;
    }
    if (kind == Scalar::f16) wide_float_op(F16{}, in.code, a, b, c, r, mask);
    else if (kind == Scalar::bf16) wide_float_op(BF16{}, in.code, a, b, c, r, mask);
    else wide_float_op(F32{}, in.code, a, b, c, r, mask);  // exp
  }
}

// One float op of `kind()` (f16, bf16, or f32 for exp) through doubles: each lane's operands decoded
// exactly, the result rounded once.
template <class Kind> void Wave::wide_float_op(Kind kind, Code code, const uint64_t* a, const uint64_t* b,
                                              const uint64_t* c, uint64_t* r, uint64_t mask) {
  auto wide = [&](auto op) { for_lanes(mask, [&](int l) { r[l] = from_double(kind(), op(l)); }); };
  auto x = [&](const uint64_t* v, int l) { return to_double(kind(), v[l]); };
  switch (code) {
    case Code::fadd: wide([&](int l) { return x(a, l) + x(b, l); }); break;
    case Code::fsub: wide([&](int l) { return x(a, l) - x(b, l); }); break;
    case Code::fmul: wide([&](int l) { return x(a, l) * x(b, l); }); break;
    case Code::fdiv: wide([&](int l) { return x(a, l) / x(b, l); }); break;
    case Code::fmax: wide([&](int l) { return max_of(x(a, l), x(b, l)); }); break;
    case Code::fmin: wide([&](int l) { return min_of(x(a, l), x(b, l)); }); break;
    case Code::exp: wide([&](int l) { return std::exp(x(a, l)); }); break;
    case Code::sqrt: wide([&](int l) { return std::sqrt(x(a, l)); }); break;
    default: wide([&](int l) { return std::fma(x(a, l), x(b, l), x(c, l)); }); break;  // fma: one rounding
  }
}

void Wave::compare(const Instr& in, uint64_t mask) {
  Scalar kind = in.in[0].kind;
  for (int e = 0; e < in.result.width; ++e) {
    const uint64_t* a = lane_row(in.in[0].slot + e);
    const uint64_t* b = lane_row(in.in[1].slot + e);
    uint64_t* r = lane_row(in.result.slot + e);
    auto lanes = [&](auto holds) { for_lanes(mask, [&](int l) { r[l] = holds(a[l], b[l]); }); };
    if (in.code == Code::fcmp) {
      // Ordered predicates: false when either operand is a NaN.
      auto ordered = [&](auto holds) {
        lanes([&](uint64_t x, uint64_t y) {
          double u = to_double(kind, x), v = to_double(kind, y);
          return u == u && v == v && holds(u, v);
        });
      };
      switch (in.imm) {
        case oeq: ordered([](double u, double v) { return u == v; }); break;
        case one: ordered([](double u, double v) { return u != v; }); break;
        case olt: ordered([](double u, double v) { return u < v; }); break;
        case ole: ordered([](double u, double v) { return u <= v; }); break;
        case ogt: ordered([](double u, double v) { return u > v; }); break;
        default: ordered([](double u, double v) { return u >= v; }); break;
      }
      continue;
    }
    int bits = bits_of(kind);
    auto sx = [bits](uint64_t v) { return sign_extend_bits(bits, v); };
    switch (in.imm) {
      case eq: lanes([](uint64_t x, uint64_t y) { return x == y; }); break;
      case ne: lanes([](uint64_t x, uint64_t y) { return x != y; }); break;
      case slt: lanes([&](uint64_t x, uint64_t y) { return sx(x) < sx(y); }); break;
      case sle: lanes([&](uint64_t x, uint64_t y) { return sx(x) <= sx(y); }); break;
      case sgt: lanes([&](uint64_t x, uint64_t y) { return sx(x) > sx(y); }); break;
      case sge: lanes([&](uint64_t x, uint64_t y) { return sx(x) >= sx(y); }); break;
      case ult: lanes([](uint64_t x, uint64_t y) { return x < y; }); break;
      case ule: lanes([](uint64_t x, uint64_t y) { return x <= y; }); break;
      case ugt: lanes([](uint64_t x, uint64_t y) { return x > y; }); break;
      default: lanes([](uint64_t x, uint64_t y) { return x >= y; }); break;
    }
  }
}

void Wave::select(const Instr& in, uint64_t mask) {
  const Operand& cond = in.in[0];
  for (int e = 0; e < in.result.width; ++e) {
    const uint64_t* c = lane_row(cond.slot + (cond.width == 1 ? 0 : e));
    const uint64_t* t = lane_row(in.in[1].slot + e);
    const uint64_t* f = lane_row(in.in[2].slot + e);
    uint64_t* r = lane_row(in.result.slot + e);
    for_lanes(mask, [&](int l) { r[l] = (c[l] & 1) ? t[l] : f[l]; });
  }
}

// A float conversion, exact widening or rounded once, in a loop made for its pair of kinds (the
// kinds constant, each lane's decode and rounding inline).
void Wave::convert(Scalar from, Scalar to, const uint64_t* a, uint64_t* r, uint64_t mask) {
  auto lanes = [&](auto from_kind, auto to_kind) {
    for_lanes(mask, [&](int l) { r[l] = from_double(to_kind(), to_double(from_kind(), a[l])); });
  };
  if ((from == Scalar::f16 || from == Scalar::bf16) && to == Scalar::f32) {
    if (from == Scalar::f16) for_lanes(mask, [&](int l) { r[l] = half_to_f32_bits(Scalar::f16, a[l]); });
    else for_lanes(mask, [&](int l) { r[l] = half_to_f32_bits(Scalar::bf16, a[l]); });
    return;
  }
  if (from == Scalar::f32 && to == Scalar::f16) return lanes(F32{}, F16{});
  if (from == Scalar::f32 && to == Scalar::bf16) return lanes(F32{}, BF16{});
  lanes([from] { return from; }, [to] { return to; });
}

void Wave::cast(const Instr& in, uint64_t mask) {
  Scalar from = in.in[0].kind, to = in.result.kind;
  uint64_t to_mask = width_mask(to);
  for (int e = 0; e < in.result.width; ++e) {
    const uint64_t* a = lane_row(in.in[0].slot + e);
    uint64_t* r = lane_row(in.result.slot + e);
    switch (in.code) {
      case Code::zext:
        if (in.flag)
          require(mask, [&](int l) { return sign_extend(from, a[l]) < 0; },
                  [&](int l) { fail(in, l, "nneg promise broken: the source is negative"); });
        for_lanes(mask, [&](int l) { r[l] = a[l]; });
        break;
      case Code::sext: for_lanes(mask, [&](int l) { r[l] = static_cast<uint64_t>(sign_extend(from, a[l])) & to_mask; }); break;
      case Code::trunc: for_lanes(mask, [&](int l) { r[l] = a[l] & to_mask; }); break;
      case Code::fpext: case Code::fptrunc:
        convert(from, to, a, r, mask);
        break;
      case Code::sitofp:
        for_lanes(mask, [&](int l) { r[l] = from_double(to, static_cast<double>(sign_extend(from, a[l]))); });
        break;
      default:  // fptosi: truncates toward zero; a value out of range is poison
        for_lanes(mask, [&](int l) {
          double value = std::trunc(to_double(from, a[l]));
          if (std::isnan(value) || !(value >= std::ldexp(-1.0, bits_of(to) - 1) && value < std::ldexp(1.0, bits_of(to) - 1)))
            fail(in, l, "fptosi of " + std::to_string(to_double(from, a[l])) + " does not fit (poison)");
          r[l] = static_cast<uint64_t>(static_cast<int64_t>(value)) & to_mask;
        });
    }
  }
}

void Wave::ptr_add(const Instr& in, uint64_t mask) {
  const uint64_t* base = lane_row(in.in[0].slot);
  const uint64_t* index = lane_row(in.in[1].slot);
  uint64_t* r = lane_row(in.result.slot);
  // An i32 index promises [0, 2^31), an i64 one (a row offset past 2^31) [0, 2^63).
  int bits = bits_of(in.in[1].kind);
  require(mask, [&](int l) { return sign_extend_bits(bits, index[l]) < 0; }, [&](int l) {
    fail(in, l, "index " + std::to_string(sign_extend_bits(bits, index[l])) + " is negative (ptr_add promises [0, 2^" +
                    std::to_string(bits - 1) + "))");
  });
  uint64_t element = static_cast<uint64_t>(in.imm);
  uint64_t index_mask = width_mask(in.in[1].kind);
  for_lanes(mask, [&](int l) { r[l] = base[l] + (index[l] & index_mask) * element; });
}

// The region a `bytes`-long access at `pointer` touches, after the bounds and alignment checks.
Region& Wave::access(const Instr& in, int lane, uint64_t pointer, size_t bytes, bool store) {
  uint64_t id = pointer >> REGION_SHIFT, offset = pointer & OFFSET_MASK;
  if (id == 0 || id >= memory.regions.size()) fail(in, lane, "the pointer points into no buffer");
  Region& region = memory.regions[id];
  if (offset + bytes > region.bytes) {
    size_t element = bytes_of(in.code == Code::store ? in.in[0].kind : in.result.kind);
    fail(in, lane, "index " + std::to_string(offset / element) + " (bytes " + std::to_string(offset) + " to " +
                       std::to_string(offset + bytes) + ") is out of bounds of " + (region.lds ? "LDS " : "buffer ") +
                       "'" + region.name + "' (" + std::to_string(region.bytes / element) + " elements, " +
                       std::to_string(region.bytes) + " bytes)");
  }
  uint64_t align = static_cast<uint64_t>(in.imm);  // a power of two, so the mask is the remainder
  if ((align & (align - 1)) == 0 ? (offset & (align - 1)) : (offset % align)) fail(in, lane, "byte offset " + std::to_string(offset) + " breaks the align=" + std::to_string(in.imm) + " promise");
  if (store && region.readonly_param) fail(in, lane, "stores to buffer '" + region.name + "', whose param promises readonly");
  if (store && !region.writable) fail(in, lane, "buffer '" + region.name + "' is read-only");
  return region;
}

namespace {

// `size` bytes (1, 2, 4 or 8) at `from`, zero-extended; and the low `size` bytes of `bits` to `to`.
// Fixed-size copies: the compiler makes each a single move.
uint64_t read_bytes(const uint8_t* from, int size) {
  switch (size) {
    case 1: return *from;
    case 2: { uint16_t v; std::memcpy(&v, from, 2); return v; }
    case 4: { uint32_t v; std::memcpy(&v, from, 4); return v; }
    default: { uint64_t v; std::memcpy(&v, from, 8); return v; }
  }
}

void write_bytes(uint8_t* to, uint64_t bits, int size) {
  switch (size) {
    case 1: *to = static_cast<uint8_t>(bits); return;
    case 2: { uint16_t v = static_cast<uint16_t>(bits); std::memcpy(to, &v, 2); return; }
    case 4: { uint32_t v = static_cast<uint32_t>(bits); std::memcpy(to, &v, 4); return; }
    default: std::memcpy(to, &bits, 8); return;
  }
}

}  // namespace

void Wave::load(const Instr& in, uint64_t mask) {
  int size = bytes_of(in.result.kind);
  size_t bytes = static_cast<size_t>(size) * in.result.width;
  uint64_t keep = width_mask(in.result.kind);
  const uint64_t* pointers = lane_row(in.in[0].slot);
  RaceDetector* races = memory.races;
  const uint32_t stamp = races ? races->begin_access(in, place.group, place.wave) : 0;
  Region* common = common_region(in, pointers, mask, bytes, false);
  if (common && !common->paged) return load_in(*common, in, mask, stamp);
  for_lanes(mask, [&](int lane) {
    uint64_t pointer = pointers[lane], offset = pointer & OFFSET_MASK;
    Region& region = common ? *common : located(in, lane, pointer, bytes, false);
    // Memory no store may write (a store there fails first) cannot race: its reads need no shadow.
    if (races && region.writable) races->read(static_cast<int>(pointer >> REGION_SHIFT), offset, bytes, stamp, lane);
    if (region.written) unwritten_lds(in, lane, region, offset, bytes);
    if (!region.paged) {
      const uint8_t* at = region.data + offset;
      for (int e = 0; e < in.result.width; ++e) reg(in.result.slot + e, lane) = read_bytes(at + e * size, size) & keep;
      return;
    }
    for (int e = 0; e < in.result.width; ++e) {
      uint64_t bits = 0;
      region.paged->read(region.base + offset + static_cast<uint64_t>(e) * size, &bits, size);
      reg(in.result.slot + e, lane) = bits & keep;
    }
  });
}

// A load whose lanes all read `region`, in bounds and aligned: the race watch over every lane, then
// the written check, then the copies, each a loop of its own. The same outcome as lane by lane: a
// race is thrown at once, an unwritten read (with the detector) only deferred, so the lowest lane
// with either is the one reported, and a failed load leaves no value anyone reads.
void Wave::load_in(Region& region, const Instr& in, uint64_t mask, uint32_t stamp) {
  const int size = bytes_of(in.result.kind);
  const size_t bytes = static_cast<size_t>(size) * in.result.width;
  const uint64_t* pointers = lane_row(in.in[0].slot);
  if (memory.races && region.writable)
    memory.races->read_lanes(static_cast<int>(pointers[__builtin_ctzll(mask)] >> REGION_SHIFT), pointers, mask, bytes,
                             stamp);
  if (region.written) {
    const uint8_t* written = region.written->data();  // 1 for a written byte, else 0
    uint64_t unwritten = 0;
    for_lanes(mask, [&](int l) {
      const uint8_t* at = written + (pointers[l] & OFFSET_MASK);
      for (size_t i = 0; i < bytes; ++i) unwritten |= at[i] ^ 1u;
    });
    if (unwritten)
      for_lanes(mask, [&](int l) { unwritten_lds(in, l, region, pointers[l] & OFFSET_MASK, bytes); });
  }
  switch (size) {
    case 1: return load_rows<1>(region, in, mask);
    case 2: return load_rows<2>(region, in, mask);
    case 4: return load_rows<4>(region, in, mask);
    default: return load_rows<8>(region, in, mask);
  }
}

template <int size> void Wave::load_rows(const Region& region, const Instr& in, uint64_t mask) {
  const uint64_t keep = width_mask(in.result.kind);
  const uint64_t* pointers = lane_row(in.in[0].slot);
  for (int e = 0; e < in.result.width; ++e) {
    uint64_t* row = lane_row(in.result.slot + e);
    const uint8_t* data = region.data + static_cast<size_t>(e) * size;
    for_lanes(mask, [&](int l) { row[l] = read_bytes(data + (pointers[l] & OFFSET_MASK), size) & keep; });
  }
}

void Wave::unwritten_lds(const Instr& in, int lane, const Region& region, uint64_t offset, size_t bytes) {
  const uint8_t* written = region.written->data() + offset;
  const uint8_t* unwritten = std::find(written, written + bytes, uint8_t{0});
  if (unwritten == written + bytes) return;
  std::string message = "reads LDS '" + region.name + "' byte " + std::to_string(offset + (unwritten - written)) +
                        " that no lane of this workgroup wrote";
  if (!memory.races) fail(in, lane, message);
  try {  // the writer may be another wave later in this interval: a race, which comes first
    fail(in, lane, message);
  } catch (const InterpError&) {
    memory.races->defer(std::current_exception());
  }
}

void Wave::store(const Instr& in, uint64_t mask) {
  const Operand& value = in.in[0];
  int size = bytes_of(value.kind);
  size_t bytes = static_cast<size_t>(size) * value.width;
  const uint64_t* pointers = lane_row(in.in[1].slot);
  RaceDetector* races = memory.races;
  const uint32_t stamp = races ? races->begin_access(in, place.group, place.wave) : 0;
  Region* common = common_region(in, pointers, mask, bytes, true);
  for_lanes(mask, [&](int lane) {
    uint64_t pointer = pointers[lane], offset = pointer & OFFSET_MASK;
    Region& region = common ? *common : located(in, lane, pointer, bytes, true);
    if (races) races->write(static_cast<int>(pointer >> REGION_SHIFT), offset, bytes, stamp, lane);
    for (int e = 0; e < value.width; ++e) {
      uint64_t bits = reg(value.slot + e, lane);
      if (region.paged) region.paged->write(region.base + offset + static_cast<uint64_t>(e) * size, &bits, size);
      else write_bytes(region.data + offset + static_cast<size_t>(e) * size, bits, size);
    }
    if (region.written) std::fill(region.written->begin() + offset, region.written->begin() + offset + bytes, 1);
  });
}

// Lane by lane, lowest first, each lane's read, add and write one step: the lanes of one wave, its
// waves and the workgroups run one at a time, so each update is indivisible. Which old value a lane
// gets depends on that order (the hardware's is unspecified); the final memory does not.
void Wave::atomic_add(const Instr& in, uint64_t mask) {
  constexpr size_t bytes = 4;  // i32 only (the builder's rule)
  const uint64_t* pointers = lane_row(in.in[0].slot);
  const uint64_t* values = lane_row(in.in[1].slot);
  uint64_t* out = lane_row(in.result.slot);
  RaceDetector* races = memory.races;
  const uint32_t stamp = races ? races->begin_access(in, place.group, place.wave) : 0;
  for_lanes(mask, [&](int lane) {
    uint64_t pointer = pointers[lane], offset = pointer & OFFSET_MASK;
    Region& region = located(in, lane, pointer, bytes, true);
    if (races) races->atomic(static_cast<int>(pointer >> REGION_SHIFT), offset, bytes, stamp, lane, in.flag);
    if (region.written) unwritten_lds(in, lane, region, offset, bytes);
    uint64_t old = 0;
    if (region.paged) region.paged->read(region.base + offset, &old, bytes);
    else old = read_bytes(region.data + offset, static_cast<int>(bytes));
    uint64_t sum = (old + values[lane]) & 0xFFFFFFFFu;
    if (region.paged) region.paged->write(region.base + offset, &sum, bytes);
    else write_bytes(region.data + offset, sum, static_cast<int>(bytes));
    if (region.written) std::fill(region.written->begin() + offset, region.written->begin() + offset + bytes, 1);
    out[lane] = old;
  });
}

// Each result element is a copy of one operand element: a row of lanes copied per element. The
// result's slots are none of the operands' (a value's slots are free only after its last read).
void Wave::vector_op(const Instr& in, uint64_t mask) {
  const Operand& a = in.in[0];
  auto copy = [&](int to, int from) {
    uint64_t* r = lane_row(in.result.slot + to);
    const uint64_t* v = lane_row(from);
    for_lanes(mask, [&](int l) { r[l] = v[l]; });
  };
  if (in.code == Code::extract_element) return copy(0, a.slot + static_cast<int>(in.imm));
  if (in.code == Code::insert_element) {
    for (int e = 0; e < a.width; ++e) copy(e, e == in.imm ? in.in[1].slot : a.slot + e);
    return;
  }
  for (int e = 0; e < in.result.width; ++e) {
    const int pick = static_cast<int>(in.data[e]);
    copy(e, pick < a.width ? a.slot + pick : in.in[1].slot + pick - a.width);
  }
}

// readfirstlane: the lowest active lane's value. bpermute: lane (i mod wave size)'s value; reading
// an inactive lane is an error (docs/ir.md leaves it undefined; the hardware would return 0). update_dpp: the value of the lane the control selects
// in the lane's row of 16, `old` when that lane is inactive or (row_shr) before the row's start (row and
// bank masks all on, bound_ctrl off).
void Wave::cross_lane(const Instr& in, uint64_t mask) {
  uint64_t source[64], out[64];  // a wave has at most 64 lanes
  for (int lane = 0; lane < width; ++lane) source[lane] = reg(in.in[in.code == Code::update_dpp ? 1 : 0].slot, lane);
  if (in.code == Code::readfirstlane) {
    uint64_t first = source[__builtin_ctzll(mask)];
    for_lanes(mask, [&](int lane) { reg(in.result.slot, lane) = first; });
    return;
  }
  for_lanes(mask, [&](int lane) {
    if (in.code == Code::bpermute) {
      int from = static_cast<int>(static_cast<uint32_t>(reg(in.in[1].slot, lane)) % width);
      if (!((mask >> from) & 1))
        fail(in, lane, "reads lane " + std::to_string(from) + ", which is inactive (docs/ir.md leaves that undefined)");
      out[lane] = source[from];
      return;
    }
    int ctrl = static_cast<int>(in.imm), from;
    if (ctrl <= 0xFF)
      from = (lane & ~3) | ((ctrl >> (2 * (lane & 3))) & 3);
    else if (ctrl < 0x120)  // row_shr:n reads lane i - n of its row; none before the row's start
      from = (lane & 15) >= (ctrl - 0x110) ? lane - (ctrl - 0x110) : -1;
    else
      from = (lane & ~15) | (((lane & 15) - (ctrl - 0x120)) & 15);  // row_ror:n reads lane i - n of its row
    out[lane] = from >= 0 && (mask >> from) & 1 ? source[from] : reg(in.in[0].slot, lane);
  });
  for_lanes(mask, [&](int lane) { reg(in.result.slot, lane) = out[lane]; });
}

}  // namespace kemit::interp
