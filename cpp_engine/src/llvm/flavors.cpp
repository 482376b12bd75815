// The flavor table: what each supported LLVM version accepts, spells and knows.
// Every row was measured on Debian's llvm-16, llvm-19 and llvm-22 (see docs/flavors.md).
#include "kemit/llvm/flavors.h"

#include <cctype>

namespace kemit::llvm {
namespace {

// Matrix instructions by the oldest flavor whose LLVM knows them (llvm_flavors.md §5, re-measured
// with llvm-as: an unknown name is accepted silently, so "knows" means the declaration gets attributes).
const std::vector<std::string> kMma16 = {"mfma_f32_32x32x8_f16",        "mfma_f32_32x32x8_bf16",
                                         "mfma_f32_16x16x16_f16",       "mfma_f32_16x16x16_bf16",
                                         "wmma_gfx11_f32_16x16x16_f16", "wmma_gfx11_f32_16x16x16_bf16"};

std::vector<std::string> concat(std::vector<std::string> head, const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

const std::vector<std::string> kMma19 =
    concat(kMma16, {"wmma_gfx12_f32_16x16x16_f16", "wmma_gfx12_f32_16x16x16_bf16"});
const std::vector<std::string> kMma22 = concat(
    kMma19, {"mfma_f32_16x16x32_bf16", "wmma_gfx1250_f32_16x16x32_f16", "wmma_gfx1250_f32_16x16x32_bf16"});

const std::string kDlCommon = "p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32";
const std::string kDlTail =
    "i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024"
    "-v2048:2048-n32:64-S32-A5-G1";

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

const std::vector<Flavor>& flavors() {
  static const std::vector<Flavor> table = {
      {"llvm16", 16, "e-" + kDlCommon + "-" + kDlTail + "-ni:7",
       false, false, false, false, false, false, false,
       {"gfx90a", "gfx1100"},
       false, kMma16},
      {"llvm19", 19,
       "e-" + kDlCommon + "-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-" + kDlTail + "-ni:7:8:9",
       true, true, true, true, false, true, true,
       {"gfx90a", "gfx942", "gfx1100", "gfx1151", "gfx1201"},
       true, kMma19},
      {"llvm22", 22,
       "e-m:e-" + kDlCommon + "-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-" + kDlTail +
           "-ni:7:8:9",
       true, true, true, true, true, true, true,
       {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201", "gfx1250"},
       true, kMma22},
  };
  return table;
}

std::vector<std::string> flavor_names() {
  std::vector<std::string> names;
  for (const auto& flavor : flavors()) names.push_back(flavor.name);
  return names;
}

const Flavor& newest_flavor() { return flavors().back(); }

const Flavor& find_flavor(std::string_view name) {
  for (const auto& flavor : flavors())
    if (flavor.name == name) return flavor;
  throw UnknownFlavor("unknown flavor '" + std::string(name) + "' (known: " + join(flavor_names()) + ")");
}

std::pair<const Flavor*, std::string> resolve_flavor(std::string_view name) {
  for (const auto& flavor : flavors())
    if (flavor.name == name) return {&flavor, ""};
  const Flavor& newest = newest_flavor();
  std::string_view digits = name.substr(0, 4) == "llvm" ? name.substr(4) : std::string_view();
  bool numeric = !digits.empty() && digits.size() < 6;
  for (char c : digits) numeric = numeric && std::isdigit(static_cast<unsigned char>(c));
  if (numeric && std::stoi(std::string(digits)) > newest.major)
    return {&newest, "note: flavor " + std::string(name) + " is not in the table; using " + newest.name +
                         ", the newest (add a row when LLVM " + std::to_string(std::stoi(std::string(digits))) +
                         " is measured)"};
  throw UnknownFlavor("unknown flavor '" + std::string(name) + "' (known: " + join(flavor_names()) +
                      "; a newer llvmN resolves to " + newest.name + ")");
}

}  // namespace kemit::llvm
