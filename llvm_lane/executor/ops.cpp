// Per-op semantics of scalar and vector instructions (machine.h): integers wrap in their width and
// a broken nsw/nuw/exact/nneg/disjoint promise is poison, reported as an error like undefined
// behaviour; floats are decoded exactly and rounded once to their format (floats.h).
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "floats.h"
#include "llvm/IR/InstrTypes.h"
#include "machine.h"

namespace kemit::exec {

namespace {

const double* half_table() {
  static std::vector<double> all(1 << 16);
  for (uint64_t bits = 0; bits < all.size(); ++bits) all[bits] = decode_float(bits, kHalf);
  return all.data();
}

}  // namespace

// A table, not decode_float: the executor converts a value per lane and operand.
const double* const kHalfValues = half_table();

namespace {

// The operands of a broken promise for the report: signed as nsw reads them, else unsigned.
std::string operands_text(uint64_t a, uint64_t b, int bits, bool as_signed) {
  if (as_signed) return " (operands " + std::to_string(signed_of(a, bits)) + ", " + std::to_string(signed_of(b, bits)) + ")";
  return " (operands " + std::to_string(a) + ", " + std::to_string(b) + ")";
}

// The integer ops that cannot be poison without a promise flag (no division, no shift).
bool wraps_only(Kind kind) {
  return kind == Kind::Add || kind == Kind::Sub || kind == Kind::Mul || kind == Kind::And || kind == Kind::Or ||
         kind == Kind::Xor;
}

// An integer op's width and promises, copied out of the Op before a lane loop so that they stay in
// registers (the loop's stores could alias the Op as far as the compiler knows).
struct Flags {
  int bits;
  bool nsw, nuw, exact, disjoint;
};
Flags flags_of(const Op& op) { return {op.type.bits, op.nsw, op.nuw, op.exact, op.disjoint}; }

// The result of an integer op, or a reason it is poison / undefined ("" = fine).
// Always inlined: called with a constant `kind`, its switch folds away inside a lane loop.
__attribute__((always_inline)) inline uint64_t integer_result(Kind kind, const Flags op, uint64_t a, uint64_t b,
                                                              const char*& poison) {
  const int bits = op.bits;
  const int64_t sa = signed_of(a, bits), sb = signed_of(b, bits);
  const uint64_t all = low_bits(~uint64_t(0), bits);
  int64_t wide = 0;
  uint64_t uwide = 0;
  switch (kind) {
    case Kind::Add:
      if (op.nsw && (__builtin_add_overflow(sa, sb, &wide) || signed_of(uint64_t(wide), bits) != wide)) poison = "add nsw overflows";
      if (op.nuw && (__builtin_add_overflow(a, b, &uwide) || uwide > all)) poison = "add nuw overflows";
      return a + b;
    case Kind::Sub:
      if (op.nsw && (__builtin_sub_overflow(sa, sb, &wide) || signed_of(uint64_t(wide), bits) != wide)) poison = "sub nsw overflows";
      if (op.nuw && a < b) poison = "sub nuw goes below zero";
      return a - b;
    case Kind::Mul:
      if (op.nsw && (__builtin_mul_overflow(sa, sb, &wide) || signed_of(uint64_t(wide), bits) != wide)) poison = "mul nsw overflows";
      if (op.nuw && (__builtin_mul_overflow(a, b, &uwide) || uwide > all)) poison = "mul nuw overflows";
      return a * b;
    case Kind::UDiv:
    case Kind::URem:
      if (b == 0) return poison = "division by zero", 0;
      if (op.exact && a % b) poison = "udiv exact has a remainder";
      return kind == Kind::UDiv ? a / b : a % b;
    case Kind::SDiv:
    case Kind::SRem:
      if (b == 0 || (sb == -1 && sa == signed_of(uint64_t(1) << (bits - 1), bits))) return poison = "signed division overflows", 0;
      if (op.exact && sa % sb) poison = "sdiv exact has a remainder";
      return uint64_t(kind == Kind::SDiv ? sa / sb : sa % sb);
    case Kind::Shl:
      if (b >= uint64_t(bits)) return poison = "shift by the width or more", 0;
      if (op.nuw && (low_bits(a << b, bits) >> b) != a) poison = "shl nuw shifts out a one";
      if (op.nsw && signed_of(low_bits(a << b, bits), bits) >> b != sa) poison = "shl nsw changes the sign";
      return a << b;
    case Kind::LShr:
    case Kind::AShr:
      if (b >= uint64_t(bits)) return poison = "shift by the width or more", 0;
      if (op.exact && low_bits(a, int(b))) poison = "exact shift drops a one";
      return kind == Kind::LShr ? a >> b : uint64_t(sa >> b);
    case Kind::And: return a & b;
    case Kind::Or:
      if (op.disjoint && (a & b)) poison = "or disjoint operands share a bit";
      return a | b;
    case Kind::Xor: return a ^ b;
    default: return poison = "not an integer op", 0;
  }
}

double float_result(Kind kind, double a, double b) {
  switch (kind) {
    case Kind::FAdd: return a + b;
    case Kind::FSub: return a - b;
    case Kind::FMul: return a * b;
    case Kind::FDiv: return a / b;
    default: return std::nan("");
  }
}

bool float_predicate(int predicate, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (predicate) {
    case llvm::CmpInst::FCMP_FALSE: return false;
    case llvm::CmpInst::FCMP_OEQ: return !unordered && a == b;
    case llvm::CmpInst::FCMP_OGT: return !unordered && a > b;
    case llvm::CmpInst::FCMP_OGE: return !unordered && a >= b;
    case llvm::CmpInst::FCMP_OLT: return !unordered && a < b;
    case llvm::CmpInst::FCMP_OLE: return !unordered && a <= b;
    case llvm::CmpInst::FCMP_ONE: return !unordered && a != b;
    case llvm::CmpInst::FCMP_ORD: return !unordered;
    case llvm::CmpInst::FCMP_UNO: return unordered;
    case llvm::CmpInst::FCMP_UEQ: return unordered || a == b;
    case llvm::CmpInst::FCMP_UGT: return unordered || a > b;
    case llvm::CmpInst::FCMP_UGE: return unordered || a >= b;
    case llvm::CmpInst::FCMP_ULT: return unordered || a < b;
    case llvm::CmpInst::FCMP_ULE: return unordered || a <= b;
    case llvm::CmpInst::FCMP_UNE: return unordered || a != b;
    default: return true;  // FCMP_TRUE
  }
}

// More ops with a check in one call-free loop each: i32 sub nsw / nuw, or disjoint, and the shifts
// without promises (a shift by the width or more is poison). False when the op is none of these or
// a lane broke its promise: the per-kind loop then computes the row again and names the lane.
KEMIT_LANE_LOOPS bool checked_row(Kind kind, const Flags flags, const uint64_t* x, const uint64_t* y, uint64_t* row, uint64_t mask) {
  const uint64_t keep = low_bits(~uint64_t(0), flags.bits), bits = uint64_t(flags.bits);
  uint64_t broken = 0;
  if (kind == Kind::Sub && flags.bits == 32 && !flags.exact && !flags.disjoint) {
    const uint64_t nuw = flags.nuw, nsw = flags.nsw;
    for_lanes(mask, [&](int l) {
      const uint64_t wide = x[l] - y[l], difference = wide & 0xffffffffu;
      // unsigned: a borrow (the 64-bit difference of two 32-bit values wraps); signed: the
      // operands' signs differ and the difference's differs from the first's
      broken |= (nuw & (wide >> 63)) | (nsw & (((x[l] ^ y[l]) & (x[l] ^ difference)) >> 31));
      row[l] = difference;
    });
  } else if (kind == Kind::Or && !flags.nsw && !flags.nuw && !flags.exact) {
    const uint64_t disjoint = flags.disjoint ? ~uint64_t(0) : 0;
    for_lanes(mask, [&](int l) {
      broken |= x[l] & y[l] & disjoint;
      row[l] = (x[l] | y[l]) & keep;
    });
  } else if ((kind == Kind::Shl || kind == Kind::LShr || kind == Kind::AShr) && !flags.nsw && !flags.nuw && !flags.exact) {
    auto lanes = [&](auto shift) {
      for_lanes(mask, [&](int l) {
        broken |= uint64_t(y[l] >= bits);
        row[l] = shift(x[l], y[l] & 63) & keep;
      });
    };
    const int width = flags.bits;
    if (kind == Kind::Shl) lanes([](uint64_t p, uint64_t q) { return p << q; });
    else if (kind == Kind::LShr) lanes([](uint64_t p, uint64_t q) { return p >> q; });
    else lanes([width](uint64_t p, uint64_t q) { return uint64_t(signed_of(p, width) >> q); });
  } else {
    return false;
  }
  return !broken;
}

// One float format's lanes into another's; the pairs the kernels use get a loop each (constant
// formats, so the conversions inline).
template <Scalar kFrom, Scalar kTo>
void convert_lanes(const uint64_t* x, uint64_t* row, uint64_t mask) {
  for_lanes(mask, [&](int l) { row[l] = from_double(to_double(x[l], kFrom), kTo); });
}
KEMIT_LANE_LOOPS void convert(Scalar from, Scalar to, const uint64_t* x, uint64_t* row, uint64_t mask) {
  if (from == Scalar::Half && to == Scalar::Float) return convert_lanes<Scalar::Half, Scalar::Float>(x, row, mask);
  if (from == Scalar::Float && to == Scalar::Half) return convert_lanes<Scalar::Float, Scalar::Half>(x, row, mask);
  if (from == Scalar::BFloat && to == Scalar::Float) return convert_lanes<Scalar::BFloat, Scalar::Float>(x, row, mask);
  if (from == Scalar::Float && to == Scalar::BFloat) return convert_lanes<Scalar::Float, Scalar::BFloat>(x, row, mask);
  for_lanes(mask, [&](int l) { row[l] = from_double(to_double(x[l], from), to); });
}

}  // namespace

KEMIT_LANE_LOOPS bool Machine::integer_binary(Wave& wave, const Op& op, uint64_t mask) {
  const View a = view(wave, op.operands[0]), b = view(wave, op.operands[1]);
  uint64_t* out = cells(wave, op.result);
  const Flags flags = flags_of(op);
  const bool promises = flags.nsw || flags.nuw || flags.exact || flags.disjoint;
  const uint64_t keep = low_bits(~uint64_t(0), flags.bits);  // the result's bits
  for (int e = 0; e < op.width; ++e) {
    const uint64_t* x = a.row(e);
    const uint64_t* y = b.row(e);
    uint64_t* row = out + e * wave_size_;
    if (!promises && wraps_only(op.kind)) {  // nothing to check: one loop per op
      auto lanes = [&](auto f) { for_lanes(mask, [&](int l) { row[l] = f(x[l], y[l]) & keep; }); };
      switch (op.kind) {
        case Kind::Add: lanes([](uint64_t p, uint64_t q) { return p + q; }); break;
        case Kind::Sub: lanes([](uint64_t p, uint64_t q) { return p - q; }); break;
        case Kind::Mul: lanes([](uint64_t p, uint64_t q) { return p * q; }); break;
        case Kind::And: lanes([](uint64_t p, uint64_t q) { return p & q; }); break;
        case Kind::Or: lanes([](uint64_t p, uint64_t q) { return p | q; }); break;
        default: lanes([](uint64_t p, uint64_t q) { return p ^ q; }); break;  // Xor
      }
      continue;
    }
    if (flags.bits == 32 && (op.kind == Kind::Add || op.kind == Kind::Mul) && !flags.exact && !flags.disjoint) {
      // The hot cases: results and broken promises in one loop without calls or branches (cells
      // hold their 32 bits zero-extended); the report only when a lane broke one.
      const uint64_t nuw = flags.nuw, nsw = flags.nsw;
      uint64_t broken = 0;
      if (op.kind == Kind::Add) {
        for_lanes(mask, [&](int l) {
          const uint64_t wide = x[l] + y[l], sum = wide & 0xffffffffu;
          // unsigned: a carry out of bit 31; signed: both operands' sign differs from the sum's
          broken |= (nuw & (wide >> 32)) | (nsw & (((x[l] ^ sum) & (y[l] ^ sum)) >> 31));
          row[l] = sum;
        });
      } else {
        for_lanes(mask, [&](int l) {
          const uint64_t wide = uint64_t(uint32_t(x[l])) * uint32_t(y[l]);
          const int64_t swide = int64_t(int32_t(x[l])) * int32_t(y[l]);
          broken |= (nuw & uint64_t(wide > 0xffffffffu)) | (nsw & uint64_t(swide != int32_t(swide)));
          row[l] = wide & 0xffffffffu;
        });
      }
      if (!broken) continue;
      const bool add = op.kind == Kind::Add;
      for (uint64_t m = mask; m; m &= m - 1) {
        int l = __builtin_ctzll(m);
        const uint64_t p = x[l], q = y[l];
        const int64_t swide = add ? int64_t(int32_t(p)) + int32_t(q) : int64_t(int32_t(p)) * int32_t(q);
        if (flags.nuw && (add ? p + q : p * q) > 0xffffffffu)
          return fail(wave, op, l, std::string(add ? "poison: add nuw overflows" : "poison: mul nuw overflows") + operands_text(p, q, 32, false));
        if (flags.nsw && swide != int32_t(swide))
          return fail(wave, op, l, std::string(add ? "poison: add nsw overflows" : "poison: mul nsw overflows") + operands_text(p, q, 32, true));
      }
      continue;
    }
    if (checked_row(op.kind, flags, x, y, row, mask)) continue;
    // Any other op: a loop per kind (a constant there, so integer_result's switch folds away) that
    // notes the first poisoned lane without a call; the report is built after the loop.
    int first = -1;
    auto lanes = [&](auto kind) {
      for_lanes(mask, [&](int l) {
        const char* reason = nullptr;
        uint64_t value = integer_result(decltype(kind)::value, flags, x[l], y[l], reason);
        if (reason && first < 0) first = l;
        row[l] = value & keep;
      });
    };
    switch (op.kind) {
      case Kind::Add: lanes(std::integral_constant<Kind, Kind::Add>{}); break;
      case Kind::Sub: lanes(std::integral_constant<Kind, Kind::Sub>{}); break;
      case Kind::Mul: lanes(std::integral_constant<Kind, Kind::Mul>{}); break;
      case Kind::UDiv: lanes(std::integral_constant<Kind, Kind::UDiv>{}); break;
      case Kind::URem: lanes(std::integral_constant<Kind, Kind::URem>{}); break;
      case Kind::SDiv: lanes(std::integral_constant<Kind, Kind::SDiv>{}); break;
      case Kind::SRem: lanes(std::integral_constant<Kind, Kind::SRem>{}); break;
      case Kind::Shl: lanes(std::integral_constant<Kind, Kind::Shl>{}); break;
      case Kind::LShr: lanes(std::integral_constant<Kind, Kind::LShr>{}); break;
      case Kind::AShr: lanes(std::integral_constant<Kind, Kind::AShr>{}); break;
      case Kind::And: lanes(std::integral_constant<Kind, Kind::And>{}); break;
      case Kind::Or: lanes(std::integral_constant<Kind, Kind::Or>{}); break;
      case Kind::Xor: lanes(std::integral_constant<Kind, Kind::Xor>{}); break;
      default: return fail(wave, op, 0, "poison: not an integer op");
    }
    if (first >= 0) {
      const char* poison = nullptr;
      const uint64_t p = x[first], q = y[first];
      integer_result(op.kind, flags, p, q, poison);
      return fail(wave, op, first, std::string("poison: ") + poison + operands_text(p, q, flags.bits, flags.nsw));
    }
  }
  return true;
}

KEMIT_LANE_LOOPS bool Machine::float_binary(Wave& wave, const Op& op, uint64_t mask) {
  View a = view(wave, op.operands[0]);
  uint64_t* out = cells(wave, op.result);
  for (int e = 0; e < op.width; ++e) {
    uint64_t* row = out + e * wave_size_;
    if (op.kind == Kind::FNeg) {
      uint64_t sign = uint64_t(1) << (op.type.bits - 1);
      for_lanes(mask, [&](int l) { row[l] = a.at(e, l) ^ sign; });
      continue;
    }
    View b = view(wave, op.operands[1]);
    if (op.type.scalar == Scalar::Float) {  // float arithmetic is IEEE binary32, rounded once
      for_lanes(mask, [&](int l) {
        float x = f32_of(a.at(e, l)), y = f32_of(b.at(e, l));
        float r = op.kind == Kind::FAdd ? x + y : op.kind == Kind::FSub ? x - y : op.kind == Kind::FMul ? x * y : x / y;
        row[l] = bits_of(r);
      });
      continue;
    }
    // f16 / bf16: exact in double (53 >= 2p + 2), then one rounding
    for_lanes(mask, [&](int l) {
      row[l] = from_double(float_result(op.kind, to_double(a.at(e, l), op.type.scalar), to_double(b.at(e, l), op.type.scalar)),
                           op.type.scalar);
    });
  }
  return true;
}

KEMIT_LANE_LOOPS bool Machine::compare(Wave& wave, const Op& op, uint64_t mask) {
  View a = view(wave, op.operands[0]), b = view(wave, op.operands[1]);
  uint64_t* out = cells(wave, op.result);
  const int bits = op.source.bits;
  const Scalar scalar = op.source.scalar;
  for (int e = 0; e < op.width; ++e) {
    uint64_t* row = out + e * wave_size_;
    auto lanes = [&](auto holds) { for_lanes(mask, [&](int l) { row[l] = holds(a.at(e, l), b.at(e, l)); }); };
    if (op.kind == Kind::FCmp) {
      lanes([&](uint64_t x, uint64_t y) { return float_predicate(op.predicate, to_double(x, scalar), to_double(y, scalar)); });
      continue;
    }
    auto sx = [bits](uint64_t v) { return signed_of(v, bits); };
    switch (op.predicate) {
      case llvm::CmpInst::ICMP_EQ: lanes([](uint64_t x, uint64_t y) { return x == y; }); break;
      case llvm::CmpInst::ICMP_NE: lanes([](uint64_t x, uint64_t y) { return x != y; }); break;
      case llvm::CmpInst::ICMP_UGT: lanes([](uint64_t x, uint64_t y) { return x > y; }); break;
      case llvm::CmpInst::ICMP_UGE: lanes([](uint64_t x, uint64_t y) { return x >= y; }); break;
      case llvm::CmpInst::ICMP_ULT: lanes([](uint64_t x, uint64_t y) { return x < y; }); break;
      case llvm::CmpInst::ICMP_ULE: lanes([](uint64_t x, uint64_t y) { return x <= y; }); break;
      case llvm::CmpInst::ICMP_SGT: lanes([&](uint64_t x, uint64_t y) { return sx(x) > sx(y); }); break;
      case llvm::CmpInst::ICMP_SGE: lanes([&](uint64_t x, uint64_t y) { return sx(x) >= sx(y); }); break;
      case llvm::CmpInst::ICMP_SLT: lanes([&](uint64_t x, uint64_t y) { return sx(x) < sx(y); }); break;
      default: lanes([&](uint64_t x, uint64_t y) { return sx(x) <= sx(y); }); break;  // ICMP_SLE
    }
  }
  return true;
}

KEMIT_LANE_LOOPS bool Machine::cast(Wave& wave, const Op& op, uint64_t mask) {
  if (op.kind == Kind::BitCast) return bitcast(wave, op, mask);
  View a = view(wave, op.operands[0]);
  uint64_t* out = cells(wave, op.result);
  const int from_bits = op.source.bits, to_bits = op.type.bits;
  for (int e = 0; e < op.width; ++e) {
    uint64_t* row = out + e * wave_size_;
    switch (op.kind) {  // the integer casts: one loop each
      case Kind::ZExt:
        if (op.nneg) {
          bool negative = false;
          for_lanes(mask, [&](int l) { negative |= signed_of(a.at(e, l), from_bits) < 0; });
          if (negative) break;  // the lane-by-lane loop below names the lane
        }
        for_lanes(mask, [&](int l) { row[l] = a.at(e, l); });
        continue;
      case Kind::SExt:
        for_lanes(mask, [&](int l) { row[l] = low_bits(uint64_t(signed_of(a.at(e, l), from_bits)), to_bits); });
        continue;
      case Kind::Trunc:
        for_lanes(mask, [&](int l) { row[l] = low_bits(a.at(e, l), to_bits); });
        continue;
      case Kind::FPExt:
      case Kind::FPTrunc:  // exact, then one rounding: never poison
        convert(op.source.scalar, op.type.scalar, a.row(e), row, mask);
        continue;
      default:
        break;
    }
    for (uint64_t m = mask; m; m &= m - 1) {
      int l = __builtin_ctzll(m);
      uint64_t x = a.at(e, l), r = 0;
      switch (op.kind) {
        case Kind::ZExt:
          if (op.nneg && signed_of(x, op.source.bits) < 0) return fail(wave, op, l, "poison: zext nneg of a negative value");
          r = x;
          break;
        case Kind::SExt: r = low_bits(uint64_t(signed_of(x, op.source.bits)), op.type.bits); break;
        case Kind::Trunc: r = low_bits(x, op.type.bits); break;
        case Kind::FPExt:
        case Kind::FPTrunc: r = from_double(to_double(x, op.source.scalar), op.type.scalar); break;
        case Kind::FPToSI:
        case Kind::FPToUI: {
          double value = std::trunc(to_double(x, op.source.scalar));
          double low = op.kind == Kind::FPToSI ? -std::ldexp(1.0, op.type.bits - 1) : 0.0;
          double high = op.kind == Kind::FPToSI ? std::ldexp(1.0, op.type.bits - 1) : std::ldexp(1.0, op.type.bits);
          if (!(value >= low && value < high)) return fail(wave, op, l, "poison: value out of the integer's range");
          r = low_bits(value < 0 ? uint64_t(int64_t(value)) : uint64_t(value), op.type.bits);
          break;
        }
        case Kind::SIToFP:
        case Kind::UIToFP: {
          if (op.source.bits > 53) return fail(wave, op, l, "integers wider than 53 bits are not supported");
          double value = op.kind == Kind::SIToFP ? double(signed_of(x, op.source.bits)) : double(x);
          r = from_double(value, op.type.scalar);
          break;
        }
        case Kind::AddrSpaceCast: {
          // flat (0) <-> LDS (3) / global (1): the cell keeps its region; flat -> LDS of a
          // non-LDS address keeps the low 32 bits as the LDS offset (what the hardware does).
          uint64_t region = x >> kRegionShift;
          r = x;
          if (op.type.address_space == 3 && region != kRegionLds) r = make_pointer(kRegionLds, x & 0xffffffffu);
          else if (op.type.address_space == 1 && region == kRegionLds) r = make_pointer(kRegionNull, x & 0xffffffffu);
          break;
        }
        case Kind::Freeze: r = x; break;
        default: return fail(wave, op, l, "unsupported cast");
      }
      row[l] = r;
    }
  }
  return true;
}

KEMIT_LANE_LOOPS bool Machine::bitcast(Wave& wave, const Op& op, uint64_t mask) {
  View a = view(wave, op.operands[0]);
  uint64_t* out = cells(wave, op.result);
  const int in_bits = op.source.bits, out_bits = op.type.bits;
  if (in_bits * op.source_width != out_bits * op.width || in_bits % 8 || out_bits % 8)
    return fail(wave, op, 0, "bitcast between sizes it cannot pair");
  // Cells hold their element's bits zero-extended, little-endian across elements as in memory:
  // equal sizes copy, narrower elements pack into wider ones, wider ones split into narrower.
  if (in_bits <= 64 && out_bits <= 64 && (out_bits % in_bits == 0 || in_bits % out_bits == 0)) {
    for (int e = 0; e < op.width; ++e) {
      uint64_t* row = out + e * wave_size_;
      if (in_bits == out_bits) {
        for_lanes(mask, [&](int l) { row[l] = low_bits(a.at(e, l), in_bits); });
      } else if (out_bits > in_bits) {
        const int parts = out_bits / in_bits;
        for_lanes(mask, [&](int l) {
          uint64_t cell = 0;
          for (int j = 0; j < parts; ++j) cell |= low_bits(a.at(e * parts + j, l), in_bits) << (j * in_bits);
          row[l] = cell;
        });
      } else {
        const int parts = in_bits / out_bits;
        const int shift = (e % parts) * out_bits;
        for_lanes(mask, [&](int l) { row[l] = low_bits(a.at(e / parts, l) >> shift, out_bits); });
      }
    }
    return true;
  }
  uint8_t bytes[256];
  if (in_bits * op.source_width / 8 > int(sizeof(bytes))) return fail(wave, op, 0, "bitcast wider than 2048 bits");
  for_lanes(mask, [&](int l) {
    for (int e = 0; e < op.source_width; ++e) {
      uint64_t cell = a.at(e, l);
      std::memcpy(bytes + e * in_bits / 8, &cell, size_t(in_bits / 8));
    }
    for (int e = 0; e < op.width; ++e) {
      uint64_t cell = 0;
      std::memcpy(&cell, bytes + e * out_bits / 8, size_t(out_bits / 8));
      out[e * wave_size_ + l] = cell;
    }
  });
  return true;
}

// An extractelement or insertelement whose index is a constant inside the vector, and any
// shufflevector (its mask is constant): every result element is one whole row of an operand (or 0
// for a poison pick), so each is copied by one lane loop. False leaves the op to the lane-by-lane
// loop, which names the lane of an index out of the vector.
KEMIT_LANE_LOOPS bool Machine::constant_index_rows(Wave& wave, const Op& op, uint64_t mask) {
  uint64_t* out = cells(wave, op.result);
  const View a = view(wave, op.operands[0]), b = view(wave, op.operands[1]);
  auto copy = [&](int e, const uint64_t* from) {
    uint64_t* row = out + size_t(e) * size_t(wave_size_);
    if (from) for_lanes(mask, [&](int l) { row[l] = from[l]; });
    else for_lanes(mask, [&](int l) { row[l] = 0; });
  };
  if (op.kind == Kind::ExtractElement) {
    if (!op.operands[1].constant || b.at(0, 0) >= uint64_t(op.source_width)) return false;
    copy(0, a.row(int(b.at(0, 0))));
    return true;
  }
  if (op.kind == Kind::InsertElement) {
    if (!op.operands[2].constant) return false;
    const uint64_t index = view(wave, op.operands[2]).at(0, 0);
    if (index >= uint64_t(op.width)) return false;
    for (int e = 0; e < op.width; ++e) copy(e, e == int(index) ? b.row(0) : a.row(e));
    return true;
  }
  for (int e = 0; e < op.width && e < 64; ++e) {  // ShuffleVector
    const int pick = op.mask[size_t(e)];
    copy(e, pick < 0 ? nullptr : pick < op.source_width ? a.row(pick) : b.row(pick - op.source_width));
  }
  return true;
}

KEMIT_LANE_LOOPS bool Machine::vector_op(Wave& wave, const Op& op, uint64_t mask) {
  uint64_t* out = cells(wave, op.result);
  View a = view(wave, op.operands[0]), b = view(wave, op.operands[1]);
  if (op.kind == Kind::Select) {
    View condition = a, on_true = b, on_false = view(wave, op.operands[2]);
    for (int e = 0; e < op.width; ++e) {
      uint64_t* row = out + e * wave_size_;
      const int c = op.source_width == 1 ? 0 : e;
      for_lanes(mask, [&](int l) { row[l] = (condition.at(c, l) & 1) ? on_true.at(e, l) : on_false.at(e, l); });
    }
    return true;
  }
  if (constant_index_rows(wave, op, mask)) return true;
  for (uint64_t m = mask; m; m &= m - 1) {
    int l = __builtin_ctzll(m);
    if (op.kind == Kind::ExtractElement) {
      uint64_t index = b.at(0, l);
      if (index >= uint64_t(op.source_width)) return fail(wave, op, l, "poison: index " + std::to_string(index) + " out of the vector");
      out[l] = a.at(int(index), l);
    } else if (op.kind == Kind::InsertElement) {
      uint64_t index = view(wave, op.operands[2]).at(0, l);
      if (index >= uint64_t(op.width)) return fail(wave, op, l, "poison: index " + std::to_string(index) + " out of the vector");
      for (int e = 0; e < op.width; ++e) out[e * wave_size_ + l] = e == int(index) ? b.at(0, l) : a.at(e, l);
    } else {  // ShuffleVector: out[e] = concat(a, b)[mask[e]] (-1: poison, 0 here)
      uint64_t staged[64];
      for (int e = 0; e < op.width && e < 64; ++e) {
        int pick = op.mask[e];
        staged[e] = pick < 0 ? 0 : pick < op.source_width ? a.at(pick, l) : b.at(pick - op.source_width, l);
      }
      for (int e = 0; e < op.width && e < 64; ++e) out[e * wave_size_ + l] = staged[e];
    }
  }
  return true;
}

bool Machine::execute(Wave& wave, const Op& op, uint64_t mask) {
  switch (op.kind) {
    case Kind::Add: case Kind::Sub: case Kind::Mul: case Kind::UDiv: case Kind::SDiv: case Kind::URem:
    case Kind::SRem: case Kind::Shl: case Kind::LShr: case Kind::AShr: case Kind::And: case Kind::Or: case Kind::Xor:
      return integer_binary(wave, op, mask);
    case Kind::FAdd: case Kind::FSub: case Kind::FMul: case Kind::FDiv: case Kind::FNeg:
      return float_binary(wave, op, mask);
    case Kind::ICmp: case Kind::FCmp:
      return compare(wave, op, mask);
    case Kind::Select: case Kind::ExtractElement: case Kind::InsertElement: case Kind::ShuffleVector:
      return vector_op(wave, op, mask);
    case Kind::GetElementPtr: return address(wave, op, mask);
    case Kind::Load: case Kind::Store: return memory(wave, op, mask);
    case Kind::AtomicAdd: return atomic_add(wave, op, mask);
    case Kind::Fence: return true;
    case Kind::Intrinsic: return intrinsic(wave, op, mask);
    default: return cast(wave, op, mask);
  }
}

}  // namespace kemit::exec
