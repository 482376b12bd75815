// The command line: flags, flavor aliases, usage and infrastructure errors (exit 2).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "scenario_support.h"

namespace kemit::driver {
namespace {

using namespace testing_support;

TEST(Cli, FlavorAliasResolvesWithANote) {
  DriverRun run = run_fake("", "", "basic", {"--flavor", "llvm23", "--only", "alpha"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.report["flavors"], nlohmann::json({"llvm22"}));
  EXPECT_NE(run.err.find("note: flavor llvm23 is not in the table; using llvm22"), std::string::npos) << run.err;
  EXPECT_EQ(verdict_of(run.report, "alpha", 1, "llvm19"), "");  // not requested, not compared
}

TEST(Cli, RepeatedFlavorsKeepTableOrder) {
  DriverRun run = run_fake("", "", "basic", {"--flavor", "llvm22", "--flavor", "llvm16", "--only", "alpha"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.report["flavors"], nlohmann::json({"llvm16", "llvm22"}));
}

TEST(Cli, UnknownFlavorIsAUsageError) {
  DriverRun run = run_fake("", "", "basic", {"--flavor", "llvm7"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err.rfind("check_byte_identity: --flavor: unknown flavor 'llvm7' (known: llvm16, llvm19, llvm22", 0), 0u)
      << run.err;
  EXPECT_EQ(run.out.find("RESULT:"), std::string::npos) << run.out;  // the header line only
}

TEST(Cli, OnlyFiltersFamiliesAndMustMatchSomething) {
  DriverRun run = run_fake("", "", "basic", {"--only", "bet"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  ASSERT_EQ(run.report["families"].size(), 1u);
  EXPECT_EQ(run.report["families"][0]["family"], "beta");
  DriverRun none = run_fake("", "", "basic", {"--only", "conv,gemm"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err, "check_byte_identity: --only conv, gemm matches no config file in " + fixture_configs("basic") + "\n");
}

TEST(Cli, MissingEngineBinarySaysWhichFileAndHowToBuildIt) {
  std::string build = ::testing::TempDir() + "kemit_empty_build_" + std::to_string(getpid());  // no kemit_emit
  std::filesystem::create_directories(build);
  DriverRun run = run_driver({"--configs", fixture_configs("basic"), "--py-cmd", fake_command("py", ""), "--build", build});
  std::filesystem::remove_all(build);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "check_byte_identity: cpp engine not found: " + build + "/cpp_engine/kemit_emit does not exist or is "
                     "not executable; build it: cmake --build " + build + " --target kemit_emit (or pass --cpp-cmd)\n");
  DriverRun custom = run_fake("", "", "basic", {"--cpp-cmd", "/nonexistent/engine --serve"});
  EXPECT_EQ(custom.exit_code, 2);
  EXPECT_EQ(custom.err, "check_byte_identity: cpp engine not found: /nonexistent/engine does not exist or is not "
                        "executable; check --cpp-cmd\n");
}

TEST(Cli, MissingPythonEngineSaysWhichFile) {
  std::string root = KEMIT_DRIVER_FIXTURES;  // a folder without py_engine/
  DriverRun run = run_driver({"--configs", fixture_configs("basic"), "--root", root, "--cpp-cmd", fake_command("cpp", "")});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "check_byte_identity: py engine not found: " + root + "/py_engine/kemit/emit.py is missing "
                     "(python3 -m kemit.emit); pass --root DIR or --py-cmd\n");
}

TEST(Cli, AFolderNamedByAFlagMustExist) {
  for (const char* flag : {"--root", "--build", "--configs"}) {
    DriverRun run = run_driver({flag, "/nonexistent/folder"});
    EXPECT_EQ(run.exit_code, 2) << flag;
    EXPECT_EQ(run.err, std::string("check_byte_identity: ") + flag + " /nonexistent/folder: no such folder\n");
    EXPECT_EQ(run.out, "");
  }
}

TEST(Cli, TheHeaderSaysWhereItLooked) {
  DriverRun run = run_fake("", "", "basic", {"--only", "alpha"});
  std::string header = run.out.substr(0, run.out.find('\n'));
  EXPECT_EQ(header.rfind("check_byte_identity ", 0), 0u) << header;
  EXPECT_NE(header.find("(git "), std::string::npos) << header;
  EXPECT_NE(header.find("configs " + fixture_configs("basic") + " (--configs)"), std::string::npos) << header;
}

TEST(Cli, SelectionByIdFilterAndItsErrors) {
  DriverRun some = run_fake("", "", "basic", {"alpha:1,2"});
  EXPECT_EQ(some.exit_code, 0) << some.out << some.err;
  ASSERT_EQ(some.report["families"].size(), 1u);
  EXPECT_EQ(some.report["families"][0]["configs"].size(), 2u);
  DriverRun filtered = run_fake("", "", "basic", {"--filter", "^beta:"});
  EXPECT_EQ(filtered.exit_code, 0) << filtered.out << filtered.err;
  ASSERT_EQ(filtered.report["families"].size(), 1u);
  EXPECT_EQ(filtered.report["families"][0]["family"], "beta");
  DriverRun missing = run_fake("", "", "basic", {"alpha:99"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err.rfind("check_byte_identity: alpha:99: no config 99 in ", 0), 0u) << missing.err;
  EXPECT_EQ(run_fake("", "", "basic", {"nosuch"}).exit_code, 2);
  EXPECT_EQ(run_fake("", "", "basic", {"alpha:x"}).exit_code, 2);
  EXPECT_EQ(run_fake("", "", "basic", {"--filter", "("}).exit_code, 2);
  EXPECT_EQ(run_fake("", "", "basic", {"--filter", "matches nothing at all"}).exit_code, 2);
}

TEST(Cli, WorkerThatDiesBeforeHelloIsAnInfrastructureError) {
  DriverRun run = run_fake("", "", "basic", {"--jobs", "1", "--cpp-cmd",
                                             "/usr/bin/python3 -c 'import sys; sys.stderr.write(\"no engine here\\n\"); sys.exit(5)'"});
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_EQ(run.err.rfind("check_byte_identity: the cpp worker (#1, pid ", 0), 0u) << run.err;
  EXPECT_NE(run.err.find(") closed its output before answering hello; it exited with status 5; its last stderr lines:\n"
                         "  | no engine here\n"),
            std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("RESULT:"), std::string::npos) << run.out;  // the header line only
}

TEST(Cli, HelloWithAnotherProtocolIsAnInfrastructureError) {
  std::string script = "import sys, json; sys.stdin.readline(); print(json.dumps({'id': 0, 'status': 'ok', 'protocol': 2, "
                       "'families': [], 'flavors': []}), flush=True); sys.stdin.read()";
  DriverRun run = run_fake("", "", "basic", {"--cpp-cmd", "/usr/bin/python3 -c \"" + script + "\""});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("answered hello badly (the driver speaks protocol 1; update the engine or the driver)"),
            std::string::npos) << run.err;
}

TEST(Cli, BrokenConfigFileIsExit2WithItsMessage) {
  std::string dir = ::testing::TempDir() + "/kemit_cli_bad_configs";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/alpha.json") << R"({"family": "alpha", "configs": [{"id": 1, "id": 2}]})";
  DriverRun run = run_driver({"--configs", dir, "--py-cmd", fake_command("py", ""), "--cpp-cmd", fake_command("cpp", "")});
  std::filesystem::remove_all(dir);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("check_byte_identity: config error: "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("/alpha.json: config id 2: duplicate key 'id'"), std::string::npos) << run.err;
}

// The arch table is the engines': a config that expects "emit" on a processor an engine's hello
// does not list is a config error naming the file, the config and the engine.
TEST(Cli, EmitConfigOnAProcessorNoEngineServesIsAConfigError) {
  std::string dir = ::testing::TempDir() + "/kemit_cli_unknown_arch";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/alpha.json") << R"({"family": "alpha", "configs": [)"
                                        R"({"id": 1, "arch": "gfx1100", "expect": "emit", "why": "w", "spec": {}}]})";
  DriverRun run = run_driver({"--configs", dir, "--py-cmd", fake_command("py", ""), "--cpp-cmd", fake_command("cpp", "")});
  std::filesystem::remove_all(dir);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("/alpha.json: config id 1: field 'arch': unknown processor 'gfx1100' (the py engine serves: "
                         "gfx90a, gfx942, gfx950); a config that expects \"emit\" needs a processor of the arch table"),
            std::string::npos) << run.err;
}

TEST(Cli, HelloWithoutArchesIsAnInfrastructureError) {
  DriverRun run = run_fake("", "--no-tables", "basic", {"--only", "alpha"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("the cpp engine's hello lists no arches"), std::string::npos) << run.err;
}

// Flavor names are resolved by the workers (op resolve_flavor); engines that resolve one name
// differently cannot be compared.
TEST(Cli, EnginesThatResolveAFlavorDifferentlyAreAnInfrastructureError) {
  DriverRun run = run_fake("", "--resolve-to llvm19", "basic", {"--flavor", "llvm22", "--only", "alpha"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("the engines resolve --flavor llvm22 differently: py -> llvm22, cpp -> llvm19"),
            std::string::npos) << run.err;
}

TEST(Cli, BadFlagValuesAreUsageErrors) {
  EXPECT_EQ(run_driver({"--jobs", "0"}).exit_code, 2);
  EXPECT_EQ(run_driver({"--timeout", "-1"}).exit_code, 2);
  DriverRun unknown = run_driver({"--frobnicate"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--frobnicate"), std::string::npos) << unknown.err;
  DriverRun quote = run_fake("", "", "basic", {"--cpp-cmd", "/usr/bin/python3 'unterminated"});
  EXPECT_EQ(quote.exit_code, 2);
  EXPECT_EQ(quote.err, "check_byte_identity: unterminated ' quote in '/usr/bin/python3 'unterminated'\n");
}

TEST(Cli, ProgressLineOnlyOnATerminalAndErasedAtTheEnd) {
  std::vector<std::string> args = {"--configs", fixture_configs("basic"), "--py-cmd", fake_command("py", ""),
                                   "--cpp-cmd", fake_command("cpp", "")};
  DriverRun terminal = run_driver(args, true);
  EXPECT_EQ(terminal.exit_code, 0) << terminal.err;
  EXPECT_NE(terminal.err.find("\r[12/12] answers"), std::string::npos) << terminal.err;
  EXPECT_TRUE(terminal.err.size() >= 4 && terminal.err.substr(terminal.err.size() - 4) == "\r\033[K") << terminal.err;
  EXPECT_EQ(terminal.out, run_driver(args, false).out);  // stdout is the same either way
}

TEST(Cli, UnwritableReportIsExit2) {
  DriverRun run = run_fake("", "", "basic", {"--json", "/nonexistent/dir/report.json"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.err, "check_byte_identity: cannot write /nonexistent/dir/report.json (check that its folder exists and is writable)\n");
  EXPECT_EQ(run.out.find("RESULT:"), std::string::npos);
}

// --last-failed reads the last report of the build it is given (here a scratch --build, so that
// no other test's run is read): only the configs that failed then run again.
TEST(Cli, LastFailedRunsWhatFailedLastTime) {
  std::string build = ::testing::TempDir() + "/kemit_last_failed_" + std::to_string(getpid());
  std::filesystem::create_directories(build);
  DriverRun first = run_fake("--alter 2", "", "basic", {"--only", "alpha", "--build", build});
  EXPECT_EQ(first.exit_code, 1) << first.out << first.err;
  EXPECT_TRUE(std::filesystem::exists(build + "/last-run/check_byte_identity.json"));
  DriverRun again = run_fake("", "", "basic", {"--last-failed", "--build", build});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_NE(again.err.find("--last-failed: the configs that failed in the last run"), std::string::npos) << again.err;
  ASSERT_EQ(again.report["families"].size(), 1u);
  ASSERT_EQ(again.report["families"][0]["configs"].size(), 1u);
  EXPECT_EQ(again.report["families"][0]["configs"][0]["id"], 2);
  DriverRun all = run_fake("", "", "basic", {"--last-failed", "--build", build});  // nothing failed: everything
  EXPECT_NE(all.err.find("nothing failed in the last run"), std::string::npos) << all.err;
  EXPECT_EQ(all.report["families"].size(), 2u);
  std::filesystem::remove_all(build);
}

TEST(Cli, MaxFailuresStopsSendingConfigs) {
  DriverRun run = run_fake("--alter 1", "", "basic", {"--only", "alpha", "--jobs", "1", "--max-failures", "1"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  // alpha has 4 configs; one slice (8 per worker) holds them all, so all ran: nothing left out.
  EXPECT_EQ(run.out.find("not run"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace kemit::driver
