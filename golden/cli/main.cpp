// `golden`: inspect, check and merge the golden shards. Blessing is run_diff's job
// (`run_diff --record-golden`): it alone has the fresh results.
#include <CLI/CLI.hpp>

#include "commands.h"
#include "kemit/golden/shard_io.h"

int main(int argc, char** argv) {
  namespace cli = kemit::golden::cli;
  CLI::App app{"golden: the kemit golden shard store (golden/shards/<family>.json)"};
  app.require_subcommand(1);
  std::string shard_dir(kemit::golden::kDefaultShardDir);
  int code = 0;

  auto* summary = app.add_subcommand("summary", "totals and per-family counters across all shards");
  bool as_json = false;
  summary->add_flag("--json", as_json, "print JSON instead of a table");
  summary->add_option("--dir", shard_dir, "the shard folder")->capture_default_str();
  summary->callback([&] { code = cli::summary(shard_dir, as_json); });

  auto* check = app.add_subcommand("check", "load shards strictly and report every bad one");
  std::vector<std::string> files;
  check->add_option("files", files, "shard files (default: every shard in --dir)");
  check->add_option("--dir", shard_dir, "the shard folder")->capture_default_str();
  check->callback([&] { code = cli::check(shard_dir, files); });

  auto* driver = app.add_subcommand("merge-driver", "git merge driver: golden merge-driver %O %A %B %P");
  std::string base, ours, theirs, merged_path;
  driver->add_option("base", base, "%O: the common ancestor")->required();
  driver->add_option("ours", ours, "%A: our version; receives the merge")->required();
  driver->add_option("theirs", theirs, "%B: their version")->required();
  driver->add_option("path", merged_path, "%P: the shard's path in the repository")->required();
  driver->callback([&] { code = cli::merge_driver(base, ours, theirs, merged_path); });

  auto* resolve = app.add_subcommand("resolve", "merge a shard that holds git conflict markers, recompute counters");
  std::string file;
  resolve->add_option("file", file, "the shard file")->required();
  resolve->callback([&] { code = cli::resolve(file); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return code;
}
