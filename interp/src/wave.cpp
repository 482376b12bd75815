// The executor of one wave (see wave.h): ops run one at a time for every active lane, lanes in
// lockstep; structured control flow narrows the lane mask (docs/ir.md, "Meaning").
#include "wave.h"

#include <cmath>
#include <cstring>

namespace kemit::interp {
namespace {

using i128 = __int128;

int lane_count(uint64_t mask) { return __builtin_popcountll(mask); }

std::string group_text(const std::array<int64_t, 3>& g) {
  return "(" + std::to_string(g[0]) + "," + std::to_string(g[1]) + "," + std::to_string(g[2]) + ")";
}

bool fits_signed(Scalar kind, i128 value) {
  int bits = bits_of(kind);
  i128 low = -(i128{1} << (bits - 1)), high = (i128{1} << (bits - 1)) - 1;
  return value >= low && value <= high;
}

}  // namespace

#define FOR_LANES(mask) for (uint64_t m_ = (mask); m_; m_ &= m_ - 1)
#define LANE __builtin_ctzll(m_)

Wave::Wave(const Program& program, Memory& memory, RunStats& stats, const Place& place, std::function<void()> barrier,
           std::vector<uint64_t>& regs)
    : program(program), memory(memory), stats(stats), place(place), barrier_hook(std::move(barrier)),
      width(program.wave_size), regs(regs) {}

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
  for (const auto& in : ops) {
    stats.wave_instructions += 1;
    stats.lane_instructions += lane_count(mask);
    exec(in, mask);
  }
}

void Wave::exec(const Instr& in, uint64_t mask) {
  switch (in.code) {
    case Code::constant:
      for (int e = 0; e < in.result.width; ++e) FOR_LANES(mask) reg(in.result.slot + e, LANE) = in.data[e];
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
  FOR_LANES(mask) {
    int lane = LANE;
    reg(iv.slot, lane) = reg(lo.slot, lane);
    for (size_t i = 0; i < in.results.size(); ++i)
      for (int e = 0; e < in.args[i + 1].width; ++e) reg(in.args[i + 1].slot + e, lane) = reg(in.in[3 + i].slot + e, lane);
  }
  auto running = [&](uint64_t lanes) {
    uint64_t active = 0;
    FOR_LANES(lanes) {
      int lane = LANE;
      if (static_cast<int32_t>(reg(iv.slot, lane)) < static_cast<int32_t>(reg(hi.slot, lane))) {
        if (static_cast<int32_t>(reg(step.slot, lane)) <= 0)
          fail(in, lane, "step " + std::to_string(static_cast<int32_t>(reg(step.slot, lane))) + " never ends the loop");
        active |= uint64_t{1} << lane;
      }
    }
    return active;
  };
  std::vector<uint64_t> carried;
  for (uint64_t active = running(mask); active; active = running(active)) {
    block(in.bodies[0], active);
    FOR_LANES(active) {
      int lane = LANE;
      carried.clear();  // read every yield before writing any iter (a yield may name an iter)
      for (const auto& y : in.yields)
        for (int e = 0; e < y.width; ++e) carried.push_back(reg(y.slot + e, lane));
      size_t at = 0;
      for (size_t i = 0; i < in.yields.size(); ++i)
        for (int e = 0; e < in.args[i + 1].width; ++e) reg(in.args[i + 1].slot + e, lane) = carried[at++];
      uint32_t next = static_cast<uint32_t>(reg(iv.slot, lane)) + static_cast<uint32_t>(reg(step.slot, lane));
      reg(iv.slot, lane) = next;
    }
  }
  FOR_LANES(mask) {
    int lane = LANE;
    for (size_t i = 0; i < in.results.size(); ++i)
      for (int e = 0; e < in.results[i].width; ++e) reg(in.results[i].slot + e, lane) = reg(in.args[i + 1].slot + e, lane);
  }
}

// Lanes where the condition holds run `then`, the others `else`; a region no lane enters is
// skipped, as the hardware skips it when exec is zero (its barriers included).
void Wave::if_then(const Instr& in, uint64_t mask) {
  uint64_t then_mask = 0;
  FOR_LANES(mask) if (reg(in.in[0].slot, LANE) & 1) then_mask |= uint64_t{1} << LANE;
  uint64_t else_mask = mask & ~then_mask;
  if (then_mask) block(in.bodies[0], then_mask);
  if (in.bodies.size() == 2 && else_mask) block(in.bodies[1], else_mask);
}

void Wave::special(const Instr& in, uint64_t mask) {
  int dim = static_cast<int>(in.imm);
  FOR_LANES(mask) {
    int lane = LANE;
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
  }
}

void Wave::int_binary(const Instr& in, uint64_t mask) {
  Scalar kind = in.result.kind;
  int bits = bits_of(kind);
  uint64_t wm = width_mask(kind);
  for (int e = 0; e < in.result.width; ++e) {
    FOR_LANES(mask) {
      int lane = LANE;
      uint64_t a = reg(in.in[0].slot + e, lane), b = reg(in.in[1].slot + e, lane), r = 0;
      i128 sa = sign_extend(kind, a), sb = sign_extend(kind, b);
      bool unsigned_wrap = false, signed_wrap = false;
      switch (in.code) {
        case Code::add:
          r = (a + b) & wm;
          unsigned_wrap = (i128(a) + i128(b)) > i128(wm);
          signed_wrap = !fits_signed(kind, sa + sb);
          break;
        case Code::sub:
          r = (a - b) & wm;
          unsigned_wrap = a < b;
          signed_wrap = !fits_signed(kind, sa - sb);
          break;
        case Code::mul:
          r = (a * b) & wm;
          unsigned_wrap = static_cast<unsigned __int128>(a) * b > wm;
          signed_wrap = !fits_signed(kind, sa * sb);
          break;
        case Code::udiv: case Code::urem:
          if (b == 0) fail(in, lane, "division by zero");
          r = in.code == Code::udiv ? a / b : a % b;
          break;
        case Code::shl:
          if (b >= static_cast<uint64_t>(bits)) fail(in, lane, "shift by " + std::to_string(b) + " >= " + std::to_string(bits) + " bits is poison");
          r = (a << b) & wm;
          unsigned_wrap = (r >> b) != a;
          signed_wrap = !fits_signed(kind, sa * (i128{1} << b));
          break;
        case Code::lshr:
          if (b >= static_cast<uint64_t>(bits)) fail(in, lane, "shift by " + std::to_string(b) + " >= " + std::to_string(bits) + " bits is poison");
          r = a >> b;
          break;
        case Code::bit_and:
          r = a & b;
          break;
        default:  // bit_or
          if (in.flag && (a & b)) fail(in, lane, "disjoint operands share set bits (" + std::to_string(a) + ", " + std::to_string(b) + ")");
          r = a | b;
          break;
      }
      if (in.nuw && unsigned_wrap)
        fail(in, lane, "nuw promise broken: unsigned wrap of " + std::to_string(a) + " and " + std::to_string(b));
      if (in.nsw && signed_wrap)
        fail(in, lane, "nsw promise broken: signed wrap of " + std::to_string(static_cast<int64_t>(sa)) + " and " +
                           std::to_string(static_cast<int64_t>(sb)));
      reg(in.result.slot + e, lane) = r;
    }
  }
}

void Wave::float_op(const Instr& in, uint64_t mask) {
  Scalar kind = in.result.kind;
  for (int e = 0; e < in.result.width; ++e) {
    FOR_LANES(mask) {
      int lane = LANE;
      uint64_t a_bits = reg(in.in[0].slot + e, lane);
      if (in.code == Code::fneg) {
        reg(in.result.slot + e, lane) = a_bits ^ (uint64_t{1} << (bits_of(kind) - 1));
        continue;
      }
      double a = to_double(kind, a_bits);
      double b = in.in.size() > 1 ? to_double(kind, reg(in.in[1].slot + e, lane)) : 0;
      double r = 0;
      switch (in.code) {
        case Code::fadd: r = a + b; break;  // a double holds the exact sum's correct rounding
        case Code::fsub: r = a - b; break;  // to f32 / f16 / bf16 (53 >= 2 * 24 + 2 bits)
        case Code::fmul: r = a * b; break;
        case Code::fdiv: r = a / b; break;
        case Code::fmax: r = std::isnan(a) ? b : std::isnan(b) ? a : (a > b ? a : b); break;
        case Code::fmin: r = std::isnan(a) ? b : std::isnan(b) ? a : (a < b ? a : b); break;
        case Code::exp: r = std::exp(a); break;
        case Code::sqrt: r = std::sqrt(a); break;
        default: {  // fma: one rounding (f32 through fmaf; f16 / bf16 through a double fma)
          double c = to_double(kind, reg(in.in[2].slot + e, lane));
          r = kind == Scalar::f32 ? static_cast<double>(std::fmaf(static_cast<float>(a), static_cast<float>(b),
                                                                  static_cast<float>(c)))
                                  : std::fma(a, b, c);
        }
      }
      reg(in.result.slot + e, lane) = from_double(kind, r);
    }
  }
}

void Wave::compare(const Instr& in, uint64_t mask) {
  Scalar kind = in.in[0].kind;
  for (int e = 0; e < in.result.width; ++e) {
    FOR_LANES(mask) {
      int lane = LANE;
      uint64_t a = reg(in.in[0].slot + e, lane), b = reg(in.in[1].slot + e, lane);
      bool r;
      if (in.code == Code::fcmp) {
        double x = to_double(kind, a), y = to_double(kind, b);
        bool ordered = !std::isnan(x) && !std::isnan(y);
        switch (in.imm) {
          case oeq: r = x == y; break;
          case one: r = x != y; break;
          case olt: r = x < y; break;
          case ole: r = x <= y; break;
          case ogt: r = x > y; break;
          default: r = x >= y; break;
        }
        r = r && ordered;
      } else {
        int64_t sa = sign_extend(kind, a), sb = sign_extend(kind, b);
        switch (in.imm) {
          case eq: r = a == b; break;
          case ne: r = a != b; break;
          case slt: r = sa < sb; break;
          case sle: r = sa <= sb; break;
          case sgt: r = sa > sb; break;
          case sge: r = sa >= sb; break;
          case ult: r = a < b; break;
          case ule: r = a <= b; break;
          case ugt: r = a > b; break;
          default: r = a >= b; break;
        }
      }
      reg(in.result.slot + e, lane) = r;
    }
  }
}

void Wave::select(const Instr& in, uint64_t mask) {
  const Operand& cond = in.in[0];
  for (int e = 0; e < in.result.width; ++e)
    FOR_LANES(mask) {
      int lane = LANE;
      bool c = reg(cond.slot + (cond.width == 1 ? 0 : e), lane) & 1;
      reg(in.result.slot + e, lane) = reg(in.in[c ? 1 : 2].slot + e, lane);
    }
}

void Wave::cast(const Instr& in, uint64_t mask) {
  Scalar from = in.in[0].kind, to = in.result.kind;
  for (int e = 0; e < in.result.width; ++e) {
    FOR_LANES(mask) {
      int lane = LANE;
      uint64_t a = reg(in.in[0].slot + e, lane), r = 0;
      switch (in.code) {
        case Code::zext:
          if (in.flag && sign_extend(from, a) < 0) fail(in, lane, "nneg promise broken: the source is negative");
          r = a;
          break;
        case Code::sext: r = static_cast<uint64_t>(sign_extend(from, a)) & width_mask(to); break;
        case Code::trunc: r = a & width_mask(to); break;
        case Code::fpext: case Code::fptrunc: r = from_double(to, to_double(from, a)); break;
        case Code::sitofp: r = from_double(to, static_cast<double>(sign_extend(from, a))); break;
        default: {  // fptosi: truncates toward zero; a value out of range is poison
          double value = std::trunc(to_double(from, a));
          if (std::isnan(value) || !(value >= std::ldexp(-1.0, bits_of(to) - 1) && value < std::ldexp(1.0, bits_of(to) - 1)))
            fail(in, lane, "fptosi of " + std::to_string(to_double(from, a)) + " does not fit (poison)");
          r = static_cast<uint64_t>(static_cast<int64_t>(value)) & width_mask(to);
        }
      }
      reg(in.result.slot + e, lane) = r;
    }
  }
}

void Wave::ptr_add(const Instr& in, uint64_t mask) {
  FOR_LANES(mask) {
    int lane = LANE;
    int64_t index = sign_extend(Scalar::i32, reg(in.in[1].slot, lane));
    if (index < 0) fail(in, lane, "index " + std::to_string(index) + " is negative (ptr_add promises [0, 2^31))");
    reg(in.result.slot, lane) = reg(in.in[0].slot, lane) + static_cast<uint64_t>(index) * in.imm;
  }
}

// The region a `bytes`-long access at `pointer` touches, after the bounds and alignment checks.
Region& Wave::access(const Instr& in, int lane, uint64_t pointer, size_t bytes, bool store) {
  uint64_t id = pointer >> REGION_SHIFT, offset = pointer & OFFSET_MASK;
  if (id == 0 || id >= memory.regions.size()) fail(in, lane, "the pointer points into no buffer");
  Region& region = memory.regions[id];
  size_t element = bytes_of(store ? in.in[0].kind : in.result.kind);
  if (offset + bytes > region.bytes)
    fail(in, lane, "index " + std::to_string(offset / element) + " (bytes " + std::to_string(offset) + " to " +
                       std::to_string(offset + bytes) + ") is out of bounds of " + (region.lds ? "LDS " : "buffer ") +
                       "'" + region.name + "' (" + std::to_string(region.bytes / element) + " elements, " +
                       std::to_string(region.bytes) + " bytes)");
  if (offset % in.imm) fail(in, lane, "byte offset " + std::to_string(offset) + " breaks the align=" + std::to_string(in.imm) + " promise");
  if (store && !region.writable) fail(in, lane, "buffer '" + region.name + "' is read-only");
  return region;
}

void Wave::load(const Instr& in, uint64_t mask) {
  int size = bytes_of(in.result.kind);
  size_t bytes = static_cast<size_t>(size) * in.result.width;
  FOR_LANES(mask) {
    int lane = LANE;
    uint64_t pointer = reg(in.in[0].slot, lane), offset = pointer & OFFSET_MASK;
    Region& region = access(in, lane, pointer, bytes, false);
    if (region.written)
      for (size_t i = 0; i < bytes; ++i)
        if (!(*region.written)[offset + i])
          fail(in, lane, "reads LDS '" + region.name + "' byte " + std::to_string(offset + i) +
                             " that no lane of this workgroup wrote");
    for (int e = 0; e < in.result.width; ++e) {
      uint64_t bits = 0;
      if (region.paged) region.paged->read(region.base + offset + static_cast<uint64_t>(e) * size, &bits, size);
      else std::memcpy(&bits, region.data + offset + static_cast<size_t>(e) * size, size);
      reg(in.result.slot + e, lane) = bits & width_mask(in.result.kind);
    }
  }
}

void Wave::store(const Instr& in, uint64_t mask) {
  const Operand& value = in.in[0];
  int size = bytes_of(value.kind);
  size_t bytes = static_cast<size_t>(size) * value.width;
  FOR_LANES(mask) {
    int lane = LANE;
    uint64_t pointer = reg(in.in[1].slot, lane), offset = pointer & OFFSET_MASK;
    Region& region = access(in, lane, pointer, bytes, true);
    for (int e = 0; e < value.width; ++e) {
      uint64_t bits = reg(value.slot + e, lane);
      if (region.paged) region.paged->write(region.base + offset + static_cast<uint64_t>(e) * size, &bits, size);
      else std::memcpy(region.data + offset + static_cast<size_t>(e) * size, &bits, size);
    }
    if (region.written) std::fill(region.written->begin() + offset, region.written->begin() + offset + bytes, 1);
  }
}

void Wave::vector_op(const Instr& in, uint64_t mask) {
  const Operand& a = in.in[0];
  FOR_LANES(mask) {
    int lane = LANE;
    if (in.code == Code::extract_element) {
      reg(in.result.slot, lane) = reg(a.slot + in.imm, lane);
    } else if (in.code == Code::insert_element) {
      for (int e = 0; e < a.width; ++e) reg(in.result.slot + e, lane) = reg(a.slot + e, lane);
      reg(in.result.slot + in.imm, lane) = reg(in.in[1].slot, lane);
    } else {
      for (int e = 0; e < in.result.width; ++e) {
        int pick = static_cast<int>(in.data[e]);
        reg(in.result.slot + e, lane) = pick < a.width ? reg(a.slot + pick, lane) : reg(in.in[1].slot + pick - a.width, lane);
      }
    }
  }
}

// readfirstlane: the lowest active lane's value. bpermute: lane (i mod wave size)'s value; reading
// an inactive lane is an error (docs/ir.md leaves it undefined; the hardware would return 0). update_dpp: the value of the lane the control selects
// in the lane's row of 16, `old` when that lane is inactive or (row_shr) before the row's start (row and
// bank masks all on, bound_ctrl off).
void Wave::cross_lane(const Instr& in, uint64_t mask) {
  std::vector<uint64_t> source(width);
  for (int lane = 0; lane < width; ++lane) source[lane] = reg(in.in[in.code == Code::update_dpp ? 1 : 0].slot, lane);
  if (in.code == Code::readfirstlane) {
    uint64_t first = source[__builtin_ctzll(mask)];
    FOR_LANES(mask) reg(in.result.slot, LANE) = first;
    return;
  }
  std::vector<uint64_t> out(width);
  FOR_LANES(mask) {
    int lane = LANE;
    if (in.code == Code::bpermute) {
      int from = static_cast<int>(static_cast<uint32_t>(reg(in.in[1].slot, lane)) % width);
      if (!((mask >> from) & 1))
        fail(in, lane, "reads lane " + std::to_string(from) + ", which is inactive (docs/ir.md leaves that undefined)");
      out[lane] = source[from];
      continue;
    }
    int ctrl = static_cast<int>(in.imm), from;
    if (ctrl <= 0xFF)
      from = (lane & ~3) | ((ctrl >> (2 * (lane & 3))) & 3);
    else if (ctrl < 0x120)  // row_shr:n reads lane i - n of its row; none before the row's start
      from = (lane & 15) >= (ctrl - 0x110) ? lane - (ctrl - 0x110) : -1;
    else
      from = (lane & ~15) | (((lane & 15) - (ctrl - 0x120)) & 15);  // row_ror:n reads lane i - n of its row
    out[lane] = from >= 0 && (mask >> from) & 1 ? source[from] : reg(in.in[0].slot, lane);
  }
  FOR_LANES(mask) reg(in.result.slot, LANE) = out[LANE];
}

}  // namespace kemit::interp
