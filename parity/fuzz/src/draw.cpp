// The spec generator. Each spec is a function of (seed, index) alone: the generator is re-seeded
// per draw from both, so a spec can be drawn again without drawing the ones before it.
#include "kemit/fuzz/draw.h"

#include <algorithm>
#include <utility>

namespace kemit::fuzz {
namespace {

using nlohmann::json;

// Percent of draws of each kind, in DrawKind order.
constexpr unsigned kDrawWeights[] = {68, 18, 8, 3, 1, 2};
constexpr int kValidTries = 200;  // rejection sampling of a spec that the domain calls valid
constexpr unsigned kOmitPercent = 25;  // a field left out takes its default
const char* const kUnknownArchs[] = {"gfx000", "gfx1300", "GFX942", ""};

template <typename T>
const T& pick(Rng& rng, const std::vector<T>& items) { return items[rng.below(items.size())]; }

// The smaller of two uniform positions: the domains list `draw` values from small to large, and
// small specs are cheap and find most bugs; large ones are still drawn, less often.
const nlohmann::json& pick_small(Rng& rng, const std::vector<nlohmann::json>& items) {
  return items[std::min(rng.below(items.size()), rng.below(items.size()))];
}

}  // namespace

uint64_t Rng::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t Rng::below(uint64_t bound) { return next() % bound; }

const char* draw_kind_name(DrawKind kind) {
  switch (kind) {
    case DrawKind::valid: return "valid";
    case DrawKind::boundary: return "boundary";
    case DrawKind::wrong_type: return "wrong_type";
    case DrawKind::unknown_field: return "unknown_field";
    case DrawKind::not_an_object: return "not_an_object";
    case DrawKind::unknown_arch: return "unknown_arch";
  }
  return "?";
}

SpecDrawer::SpecDrawer(uint64_t seed, std::vector<const Domain*> families, std::vector<std::string> archs)
    : seed_(seed), rng_(seed), families_(std::move(families)), archs_(std::move(archs)) {}

DrawKind SpecDrawer::draw_kind() {
  uint64_t roll = rng_.below(100), sum = 0;
  for (size_t kind = 0; kind < std::size(kDrawWeights); ++kind)
    if (roll < (sum += kDrawWeights[kind])) return static_cast<DrawKind>(kind);
  return DrawKind::valid;
}

json SpecDrawer::draw_valid_value(const FieldDomain& field) {
  if (field.type == FieldType::boolean) return rng_.chance(50);
  if (!field.values.empty()) return pick(rng_, field.values);
  if (!field.draw.empty() && rng_.chance(75)) return pick_small(rng_, field.draw);
  long long low = field.min.value_or(0);
  long long high = field.max.value_or(low + 64);  // an open range: stay near its bottom
  return low + static_cast<long long>(rng_.below(static_cast<uint64_t>(high - low + 1)));
}

json SpecDrawer::draw_boundary_value(const FieldDomain& field) {
  std::vector<json> options = field.boundary;
  if (field.min) options.insert(options.end(), {*field.min, *field.min - 1});
  if (field.max) options.insert(options.end(), {*field.max, *field.max + 1});
  if (field.type == FieldType::integer) options.insert(options.end(), {(1LL << 31) - 1, -(1LL << 31)});
  if (field.type == FieldType::boolean) options.insert(options.end(), {true, false});
  return options.empty() ? draw_valid_value(field) : pick(rng_, options);
}

json SpecDrawer::draw_wrong_type(const FieldDomain& field) {
  static const std::vector<json> for_int = {"4", 4.5, true, nullptr, json::array({4}), json::object({{"v", 4}}),
                                            2147483648LL, -2147483649LL, 1e100};
  static const std::vector<json> for_str = {3, true, nullptr, json::array({"f16"}), json::object(), 0.5};
  static const std::vector<json> for_bool = {1, 0, "true", nullptr, json::array()};
  switch (field.type) {
    case FieldType::integer: return pick(rng_, for_int);
    case FieldType::string: return pick(rng_, for_str);
    case FieldType::boolean: return pick(rng_, for_bool);
  }
  return nullptr;
}

json SpecDrawer::draw_fields(const Domain& domain) {
  json spec = json::object();
  for (const auto& field : domain.fields())
    if (!rng_.chance(kOmitPercent)) spec[field.name] = draw_valid_value(field);
  return spec;
}

// The processor is drawn again with every attempt: some families run on a few processors only.
json SpecDrawer::draw_valid_spec(const Domain& domain, std::string& arch) {
  json spec;
  for (int attempt = 0; attempt < kValidTries; ++attempt) {
    arch = pick(rng_, archs_);
    spec = draw_fields(domain);
    if (domain.judge(arch, spec).prediction == Prediction::valid) break;
  }
  return spec;
}

DrawnSpec SpecDrawer::draw() { return draw_at(next_index_++); }

DrawnSpec SpecDrawer::draw_at(long index) {
  rng_ = Rng(Rng(seed_).next() ^ (static_cast<uint64_t>(index) * 0xD1B54A32D192ED03ULL));
  DrawnSpec drawn;
  drawn.index = index;
  const Domain& domain = *families_[rng_.below(families_.size())];
  drawn.family = domain.family();
  drawn.kind = draw_kind();
  drawn.spec = draw_valid_spec(domain, drawn.arch);
  const auto& fields = domain.fields();
  switch (drawn.kind) {
    case DrawKind::valid: break;
    case DrawKind::boundary:
      for (uint64_t n = 1 + rng_.below(2); n > 0; --n) {
        const auto& field = pick(rng_, fields);
        drawn.spec[field.name] = draw_boundary_value(field);
      }
      break;
    case DrawKind::wrong_type: {
      const auto& field = pick(rng_, fields);
      drawn.spec[field.name] = draw_wrong_type(field);
      break;
    }
    case DrawKind::unknown_field: {
      const auto& field = pick(rng_, fields);
      const std::vector<std::string> names = {"unknown", field.name + "_x", "Vec", ""};
      drawn.spec[pick(rng_, names)] = draw_valid_value(field);
      break;
    }
    case DrawKind::not_an_object: {
      const std::vector<json> shapes = {json::array(), "spec", 3, nullptr, json::array({drawn.spec})};
      drawn.spec = pick(rng_, shapes);
      break;
    }
    case DrawKind::unknown_arch:
      drawn.arch = kUnknownArchs[rng_.below(std::size(kUnknownArchs))];
      break;
  }
  drawn.predicted = domain.judge(drawn.arch, drawn.spec).prediction;
  return drawn;
}

}  // namespace kemit::fuzz
