// Reductions across the lanes of a wave. Mirrors py_engine/kemit/families/rows_common.py (docs in
// the header). Every nested builder call of the Python source is one statement here, in Python's
// left-to-right order, so value ids match.
#include "kemit/families/rows_common.h"

#include "kemit/ir/types.h"

namespace kemit::families::rows_common {

using ir::Value;

const std::vector<std::string> CROSS = {"bpermute", "dpp"};
const std::vector<int> DPP_STEPS = {0xB1, 0x4E, 0x124, 0x128};

Value fold_vector(ir::Builder& b, const Combine& combine, const Value& acc, int vec) {
  if (vec == 1) return acc;
  Value total = b.extract_element(acc, 0);
  for (int index = 1; index < vec; ++index) {
    Value element = b.extract_element(acc, index);
    total = combine(total, element);
  }
  return total;
}

Values wave_reduce(ir::Builder& b, const target::Arch& arch, const Value& lane, const std::string& cross,
                   Values values, const CombineValues& combine) {
  ir::Type i32 = ir::scalar("i32");
  int offset = 1;
  if (cross == "dpp") {
    for (int ctrl : DPP_STEPS) {
      Values moved;
      for (const Value& v : values) moved.push_back(b.update_dpp(v, v, ctrl));
      values = combine(values, moved);
    }
    offset = DPP_ROW;
  }
  Value mask = b.const_int(i32, arch.wave_size - 1);
  while (offset < arch.wave_size) {
    Value step = b.const_int(i32, offset);
    Value shifted = b.add(lane, step, {"nuw", "nsw"});
    Value source = b.bit_and(shifted, mask);
    Values moved;
    for (const Value& v : values) moved.push_back(b.bpermute(v, source));
    values = combine(values, moved);
    offset *= 2;
  }
  return values;
}

}  // namespace kemit::families::rows_common
