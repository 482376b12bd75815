// CLI11 checks of the numeric flags every tool shares (--timeout, --jobs), against the limits of
// input_limits.h, with messages that say what is accepted (CLI11's own say "not in range
// 0.000000 to 1.79e308" and let NaN through).
#pragma once

#include <cmath>
#include <string>

#include <CLI/CLI.hpp>

#include "kemit/input_limits.h"

namespace kemit::limits {

// Seconds: a finite number above 0 and at most kMaxTimeoutSeconds ("nan", "inf", "0" refused).
inline CLI::Validator timeout_seconds_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value) || value <= 0 ||
            value > kMaxTimeoutSeconds)
          return "must be a number of seconds above 0 and at most " + std::to_string(int(kMaxTimeoutSeconds)) +
                 " (got '" + text + "')";
        return "";
      },
      "SECONDS");
}

// A count of workers: an integer from 1 to kMaxJobs.
inline CLI::Validator jobs_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        long long value = 0;
        if (!CLI::detail::lexical_cast(text, value) || value < 1 || value > kMaxJobs)
          return "must be a whole number of workers from 1 to " + std::to_string(kMaxJobs) + " (got '" + text + "')";
        return "";
      },
      "N");
}

}  // namespace kemit::limits
