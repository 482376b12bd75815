// kemit_report: the harness's report tool (docs/reports.md).
//   kemit_report merge -o OUT.json [--junit OUT.xml] SHARD.json...
//   kemit_report shards --count N [--configs DIR] [FAMILY:ID...]   which shard holds each config
// combines the --json reports of one run's shards (any lane) into the report of the whole run:
// the same rows, statuses and RESULT as the unsharded run. Exit 0 GREEN, 1 RED, 2 usage error or
// inputs that are not the complete, disjoint shards of one run.
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "kemit/driver/config.h"
#include "kemit/driver/strict_json.h"
#include "kemit/input_limits.h"
#include "kemit/report/merge.h"
#include "kemit/report/render.h"
#include "kemit/tooling/cli.h"
#include "kemit/tooling/locations.h"

namespace {

using namespace kemit::report;

NamedReport read_report(const std::string& path) {
  std::string text;
  try {  // a regular file of a bounded size, nesting and number range, as every loader reads
    text = kemit::limits::read_regular_file(path, path);
    kemit::limits::check_json_limits(text, path);
  } catch (const kemit::limits::InputLimitError& error) {
    throw MergeError(error.what());
  }
  try {
    auto parsed = kemit::driver::parse_json_detecting_duplicates(text);
    if (!parsed.duplicates.empty())
      throw MergeError(path + ": key '" + parsed.duplicates.front().key + "' appears twice at '" +
                       parsed.duplicates.front().path + "'");
    return {path, report_from_json(parsed.value)};
  } catch (const nlohmann::json::parse_error& error) {
    throw MergeError(path + ": not JSON: " + error.what());
  } catch (const std::invalid_argument& error) {
    throw MergeError(path + ": " + error.what());
  }
}

void print_summary(const Report& merged, size_t shards, std::ostream& out) {
  for (const auto& row : merged.rows)
    out << fmt::format("{:<30} {:<10} {:<5}{}\n", row.family, row.section, status_name(row.status),
                       row.note.empty() ? "" : "  (" + row.note + ")");
  for (const auto& failure : merged.run_failures) out << "RUN FAILURE: " << failure << "\n";
  size_t failed = 0;
  for (const auto& c : merged.cases) failed += c.outcome == Outcome::failed;
  out << fmt::format("merged {} shards of {}: {} cases, {} failed\n", shards, merged.run.tool, merged.cases.size(), failed);
  out << "RESULT: " << (merged.green() ? "GREEN" : "RED") << "\n";
}

int merge(const std::string& output, const std::string& junit, const std::vector<std::string>& inputs) {
  // The tree this tool belongs to (or the one around the cwd): its stores are never a report.
  std::vector<std::string> stores;
  try {
    kemit::tooling::Locations where = kemit::tooling::locate({});
    stores = {where.root + "/golden/shards", where.configs};
  } catch (const std::invalid_argument&) {  // no tree: the folder names alone are refused
  }
  std::string unwritable = report_targets_problem({{"-o", output}, {"--junit", junit}}, stores);
  if (!unwritable.empty()) throw MergeError(unwritable);
  for (const auto& path : inputs)
    if (path == output || path == junit)
      throw MergeError(path + " is both a shard to merge and the merged report: name another output file");
  std::vector<NamedReport> shards;
  for (const auto& path : inputs) shards.push_back(read_report(path));
  Report merged = merge_reports(shards);
  write_json_report(output, nlohmann::json{{"merged_from", inputs}}, merged);
  if (!junit.empty()) write_report_file(junit, junit_xml(merged));
  print_summary(merged, shards.size(), std::cout);
  return merged.green() ? 0 : 1;
}

// "<family>:<id> <shard>" per config of the folder (every family, id order) and per key given.
int list_shards(int count, const std::string& configs, const std::vector<std::string>& keys) {
  if (count < 1) throw MergeError("--count must be at least 1");
  if (!configs.empty())
    for (const auto& family : kemit::driver::load_config_dir(configs, configs, {}))
      for (const auto& config : family.configs)
        std::cout << family.family << ":" << config.id << " " << shard_of(family.family, config.id, count) << "\n";
  for (const auto& key : keys) {
    size_t colon = key.rfind(':');
    if (colon == std::string::npos || colon == 0) throw MergeError("'" + key + "' is not FAMILY:ID");
    std::int64_t id = 0;
    try {
      size_t used = 0;
      id = std::stoll(key.substr(colon + 1), &used);
      if (used != key.size() - colon - 1) throw std::invalid_argument(key);
    } catch (const std::exception&) {
      throw MergeError("'" + key + "' is not FAMILY:ID (the id is a whole number)");
    }
    std::cout << key << " " << shard_of(key.substr(0, colon), id, count) << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kemit_report: combine the reports of a sharded run (docs/reports.md)"};
  app.require_subcommand(1);
  kemit::tooling::add_version_flag(app, "kemit_report");
  std::string output, junit;
  std::vector<std::string> inputs;
  CLI::App* merge_command = app.add_subcommand("merge", "merge the --json reports of every shard of one run");
  merge_command->add_option("-o,--output", output, "the merged JSON report")->required();
  merge_command->add_option("--junit", junit, "also write the merged JUnit XML report here");
  merge_command->add_option("inputs", inputs, "the shards' --json reports (every shard 1/N..N/N once)")->required();
  int count = 0;
  std::string configs;
  std::vector<std::string> keys;
  CLI::App* shards_command = app.add_subcommand("shards", "print which shard of N holds each config (docs/reports.md)");
  shards_command->add_option("--count", count, "N, the number of shards")->required();
  shards_command->add_option("--configs", configs, "a config folder: every config of it");
  shards_command->add_option("keys", keys, "FAMILY:ID keys");
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& help_or_version) {
    return app.exit(help_or_version);
  } catch (const CLI::ParseError& error) {
    std::cerr << "kemit_report: " << error.what() << " (see --help)\n";
    return 2;
  }
  const char* command = shards_command->parsed() ? "kemit_report shards: " : "kemit_report merge: ";
  try {
    if (shards_command->parsed()) return list_shards(count, configs, keys);
    return merge(output, junit, inputs);
  } catch (const std::exception& error) {  // MergeError, ConfigError, an unwritable output
    std::cerr << command << error.what() << "\n";
  }
  return 2;
}
