// Invariants every shard keeps before it is written: the writer never produces a file the
// strict loader would refuse.
#include <fmt/format.h>

#include "kemit/golden/error.h"
#include "kemit/golden/shard_io.h"

namespace kemit::golden {

namespace {

[[noreturn]] void invalid(const std::string& label, const std::string& problem) {
  throw GoldenError(label, 0, problem, "this shard was built wrongly by its caller; nothing was written");
}

void validate_section(const Section& s, const std::string& label, const std::string& where, bool may_refuse) {
  if (s.is_rejected()) {
    if (!may_refuse) invalid(label, where + " cannot be a refusal");
    if (!s.sha256.empty() || s.bytes != 0 || !s.resources.empty() || !s.code.empty())
      invalid(label, where + " is a refusal and cannot also hold a sha256, bytes, resources or code");
    return;
  }
  if (!is_sha256_hex(s.sha256))
    invalid(label, fmt::format("{} sha256 \"{}\" is not 64 lowercase hex digits", where, s.sha256));
  if (!s.code.empty() && !is_sha256_hex(s.code))
    invalid(label, fmt::format("{} code \"{}\" is not 64 lowercase hex digits", where, s.code));
}

void validate_entry(const Entry& e, const Shard& shard, const std::string& label) {
  std::string where = fmt::format("entry id {}", e.id);
  if (e.id == 0) invalid(label, "entry ids start at 1");
  if (!is_sha256_hex(e.spec_digest)) invalid(label, where + " spec_digest is not 64 lowercase hex digits");
  if (e.arch.empty()) invalid(label, where + " has no arch");
  if (e.is_rejected()) {
    if (!e.kernel_name.empty() || !e.flavors.empty() || !e.canonical.sha256.empty())
      invalid(label, where + " is a validation refusal and cannot hold a kernel name or sections");
    return;
  }
  if (e.kernel_name.empty()) invalid(label, where + " has no kernel name");
  validate_section(e.canonical, label, where + " canonical", false);
  if (e.flavors.size() != shard.flavors.size())
    invalid(label, fmt::format("{} has {} flavor sections; the shard has {} flavors", where, e.flavors.size(),
                               shard.flavors.size()));
  for (const auto& f : shard.flavors) {
    auto it = e.flavors.find(f);
    if (it == e.flavors.end()) invalid(label, fmt::format("{} lacks flavor \"{}\"", where, f));
    validate_section(it->second, label, where + " " + f, true);
  }
}

}  // namespace

void validate_shard(const Shard& shard, const std::string& label) {
  if (!is_family_name(shard.family))
    invalid(label, fmt::format("family \"{}\" is not a family name ([a-z0-9_]+)", shard.family));
  for (std::size_t i = 0; i < shard.flavors.size(); ++i) {
    if (!is_family_name(shard.flavors[i]) || shard.flavors[i] == kCanonicalSection)
      invalid(label, fmt::format("\"{}\" is not a flavor name", shard.flavors[i]));
    if (i > 0 && !flavor_less(shard.flavors[i - 1], shard.flavors[i]))
      invalid(label, "flavors must be unique and in natural order");
  }
  for (std::size_t i = 0; i < shard.entries.size(); ++i) {
    if (i > 0 && shard.entries[i - 1].id >= shard.entries[i].id)
      invalid(label, fmt::format("entry ids must increase strictly (id {} follows id {})", shard.entries[i].id,
                                 shard.entries[i - 1].id));
    validate_entry(shard.entries[i], shard, label);
  }
}

}  // namespace kemit::golden
