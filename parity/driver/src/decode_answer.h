// Private to the driver: one engine's answer checked against the protocol's shape.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kemit/driver/verdict.h"
#include "kemit/driver/worker_pool.h"

namespace kemit::driver {

struct DecodedSection {
  bool rejected = false;
  // The text, or the refusal reason: a view into the decoded Answer's response, which must
  // outlive this (a copy of every module cost the fuzzer a tenth of its own CPU).
  std::string_view content;
};

struct DecodedAnswer {
  enum class Kind { ok, rejected, failed } kind = Kind::failed;
  Verdict failure = Verdict::crash;  // when failed: CRASH or TIMEOUT
  std::string problem;               // when failed: what went wrong
  std::string reason;                // when rejected
  std::string kernel_name;
  std::string canonical;  // the canonical section: the canonical IR, then the launch plan
  std::map<std::string, DecodedSection> ll;  // when ok: exactly the requested flavors
};

// Anything off-contract (unknown status, a missing or extra field, a wrong type) is a failure.
// The result's `ll` points into answer.response: keep `answer` alive while it is used.
DecodedAnswer decode_answer(const Answer& answer, const std::string& engine, const std::vector<std::string>& flavors);

}  // namespace kemit::driver
