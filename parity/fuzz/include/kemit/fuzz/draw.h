// Drawing specs from the domains, deterministically for a seed: mostly valid specs, a share at
// and past the boundaries, a share of wrong types, unknown fields and unknown processors.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/fuzz/domain.h"

namespace kemit::fuzz {

// The kinds of draw, in the order of kDrawWeights.
enum class DrawKind { valid, boundary, wrong_type, unknown_field, not_an_object, unknown_arch };
const char* draw_kind_name(DrawKind kind);

struct DrawnSpec {
  long index = 0;  // position in the run: with the seed, it reproduces the draw
  std::string family;
  std::string arch;
  nlohmann::json spec;
  DrawKind kind = DrawKind::valid;
  Prediction predicted = Prediction::valid;  // what the domain says about it
};

// splitmix64: a tiny generator whose sequence is the same on every platform and library
// (std::uniform_int_distribution is not specified bit for bit).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  uint64_t below(uint64_t bound);  // uniform in [0, bound), bound > 0
  bool chance(unsigned percent) { return below(100) < percent; }

 private:
  uint64_t state_;
};

class SpecDrawer {
 public:
  // `families`: the domains to draw from (each equally often), `archs`: the processors.
  SpecDrawer(uint64_t seed, std::vector<const Domain*> families, std::vector<std::string> archs);
  DrawnSpec draw();                // the next index's spec
  DrawnSpec draw_at(long index);   // the spec of this index (the same as the run drew)

 private:
  nlohmann::json draw_valid_value(const FieldDomain& field);
  nlohmann::json draw_boundary_value(const FieldDomain& field);
  nlohmann::json draw_wrong_type(const FieldDomain& field);
  nlohmann::json draw_fields(const Domain& domain);
  nlohmann::json draw_valid_spec(const Domain& domain, std::string& arch);
  DrawKind draw_kind();

  uint64_t seed_;
  Rng rng_;
  std::vector<const Domain*> families_;
  std::vector<std::string> archs_;
  long next_index_ = 0;
};

}  // namespace kemit::fuzz
