// Times kemit::emit in-process, per parity config, exactly as the gate asks for it: one call per
// config with every requested flavor (default: every flavor of the table).
//
// Usage: kemit_emit_bench [--flavor F]... [--min-reps N] [--min-seconds S] CONFIG_FILE...
//
// Output, one JSON object per line (bench/emit/run.py reads it):
//   {"engine":"cpp","families":[...],"flavors":[...]}                      first line
//   {"family":F,"id":N,"status":"ok"|"rejected"|"error","reps":R,
//    "median_s":..,"min_s":..,"cpu_s":..,"encode_s":..}                      one per config
// median_s / min_s: wall time of one kemit::emit call (parse, validate, build, print, lower every
// flavor); cpu_s: its median thread CPU time (what it costs on a machine that others load too);
// encode_s: median time to turn the result into the protocol's answer line (as `--serve` does),
// reported apart so that JSON cost can be told from engine work. Each config is called once to
// warm up, then at least N times and at least S seconds in total.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/engine.h"
#include "kemit/llvm/flavors.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The answer line `kemit_emit --serve` would write (same shape as docs/protocol.md).
std::string answer_line(const kemit::EmitResult& result) {
  json answer;
  answer["id"] = 1;
  if (result.rejected) {
    answer["status"] = "rejected";
    answer["reason"] = result.reason;
  } else {
    answer["status"] = "ok";
    answer["kernel_name"] = result.kernel_name;
    answer["canonical"] = result.canonical;
    json ll = json::object();
    for (const auto& section : result.ll)
      ll[section.flavor] = section.rejected ? json{{"rejected", section.reason}} : json{{"text", section.text}};
    answer["ll"] = std::move(ll);
  }
  return answer.dump();
}

int usage(const char* message) {
  std::fprintf(stderr, "kemit_emit_bench: %s\nusage: kemit_emit_bench [--flavor F]... [--min-reps N] "
                       "[--min-seconds S] CONFIG_FILE...\n", message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> flavors, files;
  int min_reps = 20;
  double min_seconds = 0.02;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    try {
      if (arg == "--flavor") flavors.push_back(value());
      else if (arg == "--min-reps") min_reps = std::max(1, std::stoi(value()));
      else if (arg == "--min-seconds") min_seconds = std::stod(value());
      else if (arg.rfind("--", 0) == 0) return usage(("unknown flag " + arg).c_str());
      else files.push_back(arg);
    } catch (const std::exception& error) {
      return usage(error.what());
    }
  }
  if (files.empty()) return usage("no config file given");
  if (flavors.empty()) flavors = kemit::llvm::flavor_names();

  std::cout << json{{"engine", "cpp"}, {"families", kemit::family_names()}, {"flavors", flavors}}.dump() << "\n";
  for (const auto& file : files) {
    std::ifstream in(file);
    if (!in) {
      std::fprintf(stderr, "kemit_emit_bench: cannot read %s\n", file.c_str());
      return 2;
    }
    json document = json::parse(in);
    std::string family = document.at("family").get<std::string>();
    for (const auto& config : document.at("configs")) {
      const std::string arch = config.at("arch").get<std::string>();
      const json& spec = config.at("spec");
      json row{{"family", family}, {"id", config.at("id")}};
      try {
        kemit::EmitResult result = kemit::emit(family, arch, spec, flavors);  // warm-up
        std::vector<double> times, cpu_times, encode_times;
        auto begin = Clock::now();
        while (static_cast<int>(times.size()) < min_reps || seconds_since(begin) < min_seconds) {
          double cpu_start = thread_cpu_seconds();
          auto start = Clock::now();
          result = kemit::emit(family, arch, spec, flavors);
          times.push_back(seconds_since(start));
          cpu_times.push_back(thread_cpu_seconds() - cpu_start);
          start = Clock::now();
          std::string line = answer_line(result);
          encode_times.push_back(seconds_since(start));
          if (line.empty()) std::abort();  // keeps the encoding from being optimized away
        }
        row["status"] = result.rejected ? "rejected" : "ok";
        row["reps"] = times.size();
        row["median_s"] = median(times);
        row["min_s"] = *std::min_element(times.begin(), times.end());
        row["cpu_s"] = median(cpu_times);
        row["encode_s"] = median(encode_times);
      } catch (const std::exception& error) {
        row["status"] = "error";
        row["error"] = error.what();
      }
      std::cout << row.dump() << "\n" << std::flush;
    }
  }
  return 0;
}
