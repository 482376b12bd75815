#include "isa_profile.h"

#include <map>
#include <regex>
#include <set>

namespace kemit::lane {
namespace {

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The mnemonic without the encoding suffixes the assembler prints for one operation
// (`v_fmac_f32_e32` and `v_fmac_f32_e64` are one FMA).
std::string operation(const std::string& mnemonic) {
  for (const char* suffix : {"_e64_dpp", "_e32", "_e64", "_sdwa", "_dpp"}) {  // no regex: this runs on every line
    const size_t length = std::char_traits<char>::length(suffix);
    if (mnemonic.size() > length && mnemonic.compare(mnemonic.size() - length, length, suffix) == 0)
      return mnemonic.substr(0, mnemonic.size() - length);
  }
  return mnemonic;
}

// Bits moved by one memory instruction, from the width its mnemonic names: dwordxN, dword,
// bN (gfx11+), u16/short, u8/byte; ds_read2/ds_load_2addr move two elements. 0 when unnamed.
int64_t access_bits(const std::string& op) {
  static const std::regex dwords("dwordx([0-9]+)"), bits("_b([0-9]+)"), halves("(short|_u16|_i16)"),
      bytes("(byte|_u8|_i8)");
  std::smatch match;
  int64_t width = 0;
  if (std::regex_search(op, match, dwords)) width = 32 * std::stoll(match[1]);
  else if (contains(op, "dword")) width = 32;
  else if (std::regex_search(op, match, bits)) width = std::stoll(match[1]);
  else if (std::regex_search(op, match, halves)) width = 16;
  else if (std::regex_search(op, match, bytes)) width = 8;
  bool pair = contains(op, "read2") || contains(op, "write2") || contains(op, "_2addr");
  return pair ? 2 * width : width;
}

// "global", "buffer", "flat", "scratch" or "lds" with "load", "store" or "atomic"; "" otherwise.
std::pair<std::string, std::string> memory_kind(const std::string& op) {
  std::string space;
  for (const char* prefix : {"global_", "buffer_", "flat_", "scratch_"})
    if (starts_with(op, prefix)) space = std::string(prefix, std::string(prefix).size() - 1);
  if (starts_with(op, "ds_")) space = "lds";
  if (space.empty()) return {};
  if (contains(op, "atomic") || (space == "lds" && (contains(op, "_add_") || contains(op, "_cmpst"))))
    return {space, "atomic"};
  if (contains(op, "load") || contains(op, "ds_read")) return {space, "load"};
  if (contains(op, "store") || contains(op, "ds_write")) return {space, "store"};
  return {space, "other"};  // ds_bpermute, ds_swizzle: cross-lane, no memory traffic of their own
}

bool is_packed_fma(const std::string& op) { return starts_with(op, "v_pk_fma_"); }

bool is_scalar_fma(const std::string& op) {
  static const std::set<std::string> fmas = {"v_fma_f32",    "v_fmac_f32",   "v_fmaak_f32",  "v_fmamk_f32",
                                             "v_mac_f32",    "v_mad_f32",    "v_fma_f16",    "v_fmac_f16",
                                             "v_fmaak_f16",  "v_fmamk_f16",  "v_mad_f16",    "v_mac_f16",
                                             "v_fma_mix_f32", "v_fma_mixlo_f16", "v_fma_mixhi_f16",
                                             "v_mad_mix_f32", "v_fma_f64",   "v_fmac_f64",   "v_fmac_legacy_f32",
                                             "v_fma_legacy_f32", "v_mad_legacy_f32", "v_fma_dx9_zero_f32"};
  return fmas.count(op) > 0;
}

bool is_matrix(const std::string& op) {
  return starts_with(op, "v_mfma_") || starts_with(op, "v_smfmac_") || starts_with(op, "v_wmma_") ||
         starts_with(op, "v_swmmac_");
}

std::vector<std::string> scalar_classes(const std::string& op) {
  if (starts_with(op, "s_waitcnt") || starts_with(op, "s_wait_")) return {"s_waitcnt"};
  if (op == "s_branch" || starts_with(op, "s_cbranch_")) return {"branch"};
  if (starts_with(op, "s_load_") || starts_with(op, "s_buffer_load_") || starts_with(op, "s_store_")) return {"smem"};
  if (starts_with(op, "s_barrier")) return {"s_barrier"};
  if (op == "s_nop" || op == "s_endpgm" || starts_with(op, "s_setprio") || starts_with(op, "s_sleep")) return {};
  return {"salu"};
}

std::vector<std::string> vector_classes(const std::string& op) {
  if (is_matrix(op)) return {op, "mma"};
  if (starts_with(op, "v_readfirstlane")) return {op, "readfirstlane", "valu"};
  std::vector<std::string> classes{"valu"};
  if (starts_with(op, "v_pk_")) classes.push_back("valu_packed");
  if (is_packed_fma(op)) classes.insert(classes.end(), {op, "packed_fma"});
  if (is_scalar_fma(op)) classes.insert(classes.end(), {op, "scalar_fma"});
  return classes;
}

bool is_label(const std::string& line) { return !line.empty() && line.back() == ':'; }

std::string mnemonic_of(const std::string& line) { return line.substr(0, line.find_first_of(" \t")); }

// The label a branch instruction jumps to, or "".
std::string branch_target(const std::string& line) {
  std::string op = mnemonic_of(line);
  if (op != "s_branch" && !starts_with(op, "s_cbranch_")) return "";
  size_t at = line.find(".L");
  if (at == std::string::npos) return "";
  return line.substr(at, line.find_first_of(" \t,", at) - at);
}

void add_line(const std::string& line, IsaCounts& counts) {
  for (const std::string& key : instruction_classes(line)) ++counts[key];
}

// A loop is the code from a label to the last branch back to it; nested loops are inside theirs.
std::vector<bool> loop_lines(const std::vector<std::string>& lines) {
  std::map<std::string, size_t> labels;
  std::vector<bool> in_loop(lines.size(), false);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (is_label(lines[i])) labels[lines[i].substr(0, lines[i].size() - 1)] = i;
    auto target = labels.find(branch_target(lines[i]));
    if (target == labels.end()) continue;  // forward or no branch
    for (size_t j = target->second; j <= i; ++j) in_loop[j] = true;
  }
  return in_loop;
}

IsaProfile profile_kernel(const std::vector<std::string>& lines) {
  IsaProfile profile;
  std::vector<bool> in_loop = loop_lines(lines);
  std::map<std::string, size_t> labels;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (is_label(lines[i])) labels[lines[i].substr(0, lines[i].size() - 1)] = i;
    add_line(lines[i], profile.counts);
    if (in_loop[i]) add_line(lines[i], profile.loop_counts);
    if (labels.count(branch_target(lines[i]))) ++profile.counts["loops"];
  }
  return profile;
}

}  // namespace

std::vector<std::string> instruction_classes(const std::string& line) {
  if (line.empty() || is_label(line)) return {};
  std::string op = operation(mnemonic_of(line));
  std::vector<std::string> keys{"instructions"};
  auto [space, kind] = memory_kind(op);
  std::vector<std::string> classes;
  if (!space.empty()) {
    classes = {op, space + "_" + kind + "s"};
    int64_t bits = access_bits(op);
    if ((kind == "load" || kind == "store") && bits > 0) classes.push_back(space + "_" + kind + "_" + std::to_string(bits));
  } else if (starts_with(op, "s_")) {
    classes = scalar_classes(op);
  } else if (starts_with(op, "v_")) {
    classes = vector_classes(op);
  }
  keys.insert(keys.end(), classes.begin(), classes.end());
  return keys;
}

std::vector<IsaProfile> profile_code_text(const std::string& code) {
  std::vector<IsaProfile> profiles;
  std::vector<std::string> lines;
  bool open = false;
  auto close = [&]() {
    if (open) profiles.push_back(profile_kernel(lines));
    lines.clear();
  };
  size_t start = 0;
  while (start < code.size()) {
    size_t end = code.find('\n', start);
    if (end == std::string::npos) end = code.size();
    std::string line = code.substr(start, end - start);
    start = end + 1;
    if (line == "kernel:") {
      close();
      open = true;
    } else if (open) {
      lines.push_back(line);
    }
  }
  close();
  return profiles;
}

std::vector<int64_t> parse_occupancies(const std::string& joined, size_t kernels) {
  std::vector<int64_t> values;
  size_t start = 0;
  while (start < joined.size()) {
    size_t end = joined.find(',', start);
    if (end == std::string::npos) end = joined.size();
    std::string value = joined.substr(start, end - start);
    bool number = !value.empty() && value.size() <= 6 && value.find_first_not_of("0123456789") == std::string::npos;
    values.push_back(number ? std::stoll(value) : 0);  // not a count: as if none was printed
    start = end + 1;
  }
  values.resize(kernels, 0);
  return values;
}

}  // namespace kemit::lane
