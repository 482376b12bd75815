// `golden`: inspect, check and merge the golden shards. Blessing is run_diff's job
// (`run_diff --record-golden`): it alone has the fresh results.
#include <CLI/CLI.hpp>

#include "commands.h"
#include "kemit/golden/shard_io.h"
#include "kemit/tooling/cli.h"
#include "kemit/tooling/version.h"

namespace {

// `summary --json` prints JSON only: the shard folder is found by the same rule, without a header.
std::string shard_dir_quiet(const kemit::tooling::LocationFlags& where, const std::string& shard_dir) {
  return shard_dir.empty() ? kemit::tooling::locate(where).root + "/golden/shards" : shard_dir;
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = kemit::golden::cli;
  CLI::App app{"golden: the kemit golden shard store (golden/shards/<family>.json)"};
  app.require_subcommand(1);
  std::string shard_dir;  // "" = <tree>/golden/shards, the tree found by the rule of kemit/tooling/locations.h
  kemit::tooling::LocationFlags where;
  app.add_option("--root", where.root, "the source tree whose golden/shards is the default --dir; default: the checkout "
                                        "at or above the current folder, else the tree this tool was built from");
  kemit::tooling::add_version_flag(app, "golden");
  int code = 0;
  // The shard folder of a command that reads shards: --dir, else <tree>/golden/shards; printed on
  // its header line (merge-driver and resolve take the files git names and print no header).
  auto shards = [&](const std::string& tool) {
    kemit::tooling::Locations found = kemit::tooling::locate(where);
    if (shard_dir.empty()) shard_dir = found.root + "/golden/shards";
    std::cout << kemit::tooling::version_line(tool) << ": tree " << found.root << " (" << found.root_origin
              << "), shards " << shard_dir << "\n";
    return shard_dir;
  };

  auto* summary = app.add_subcommand("summary", "totals, per-family counters, TWIN lines and each family's roofline");
  cli::SummaryOptions summary_options;
  summary->add_flag("--json", summary_options.as_json, "print JSON instead of a table");
  summary->add_flag("--per-config", summary_options.per_config, "a roofline line (JSON: an object) per config");
  summary->add_option("select", summary_options.select, "FAMILY[:ID[,ID...]]: the rooflines shown (default: all)");
  summary->add_option("--dir", shard_dir, "the shard folder (default: <tree>/golden/shards)");
  summary->add_option("--configs", where.configs, "today's config folder, for the rooflines (default: <tree>/parity/configs)");
  summary->callback([&] {
    summary_options.shard_dir = summary_options.as_json ? shard_dir_quiet(where, shard_dir) : shards("golden summary");
    kemit::tooling::Locations found = kemit::tooling::locate(where);
    summary_options.root = found.root;
    summary_options.configs_dir = found.configs;
    code = cli::summary(summary_options);
  });

  auto* check = app.add_subcommand("check", "load shards strictly and report every bad one");
  std::vector<std::string> files;
  check->add_option("files", files, "shard files (default: every shard in --dir)");
  check->add_option("--dir", shard_dir, "the shard folder (default: <tree>/golden/shards)");
  check->callback([&] { code = cli::check(files.empty() ? shards("golden check") : shard_dir, files); });

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
  } catch (const std::invalid_argument& e) {  // no tree found, or --root is not a folder
    std::cerr << "golden: " << e.what() << "\n";
    return 2;
  }
  return code;
}
