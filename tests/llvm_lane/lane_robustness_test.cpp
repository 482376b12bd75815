// The lane survives its workers: a checker killed mid-run, a checker that hangs,
// a checker of the wrong LLVM version, a prover worker that dies or hangs; and it enforces the
// text rules that LLVM itself lets through silently (datalayout, "target-cpu").
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "checker_session.h"
#include "kemit/lane/proofs.h"
#include "lane_test_support.h"
#include "prover_worker.h"

namespace kemit::lane::testing {
namespace {

// A stand-in checker written as a shell script, for failure modes a real one never shows.
std::string fake_checker(const std::string& name, const std::string& body) {
  std::string path = (std::filesystem::temp_directory_path() / (name + "_" + std::to_string(getpid()))).string();
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  chmod(path.c_str(), 0755);
  return path;
}

TEST(LaneRobustness, KilledCheckerIsCrashThenRespawned) {
  REQUIRE_FLAVOR("llvm19");
  CheckerSession session(default_toolchains().at(19).checker, 19, std::chrono::seconds(30));
  std::string clean = read_module("lds_reverse.ll");
  ASSERT_EQ(session.check("first.ll", clean).kind, CheckerAnswer::Kind::ANSWERED);
  pid_t first_pid = session.pid();
  ASSERT_GT(first_pid, 0);
  kill(first_pid, SIGKILL);  // the process this test's session started, by its pid
  CheckerAnswer crashed = session.check("second.ll", clean);
  EXPECT_EQ(crashed.kind, CheckerAnswer::Kind::CRASHED);
  EXPECT_NE(crashed.diagnostic.find("died"), std::string::npos) << crashed.diagnostic;
  CheckerAnswer again = session.check("third.ll", clean);
  EXPECT_EQ(again.kind, CheckerAnswer::Kind::ANSWERED) << again.diagnostic;
  EXPECT_TRUE(again.parsed && again.verified);
  EXPECT_NE(session.pid(), first_pid);
}

TEST(LaneRobustness, HangingCheckerIsCrashAfterTimeout) {
  std::string script = fake_checker("kemit_hanging_checker", "printf 'READY\\t19.1.7\\n'; exec sleep 60");
  LaneOptions options = test_options();
  options.toolchains = default_toolchains();
  options.toolchains[19] = Toolchain{script, "/bin/true"};
  options.checker_timeout = std::chrono::milliseconds(300);
  options.llc_timeout = std::chrono::milliseconds(0);  // a COMPILE may take checker + codegen timeouts
  LaneResult result = check_one(module_from("lds_reverse.ll", "llvm19", "gfx942"), options);
  EXPECT_EQ(result.verdict, Verdict::CRASH) << result.detail;
  EXPECT_NE(result.detail.find("did not answer within 300 ms"), std::string::npos) << result.detail;
  std::filesystem::remove(script);
}

TEST(LaneRobustness, CheckerOfTheWrongVersionIsToolchainMissing) {
  std::string script = fake_checker("kemit_wrong_checker", "printf 'READY\\t18.1.8\\n'; cat >/dev/null");
  LaneOptions options = test_options();
  options.toolchains = default_toolchains();
  options.toolchains[19] = Toolchain{script, "/bin/true"};
  LaneResult result = check_one(module_from("lds_reverse.ll", "llvm19", "gfx942"), options);
  EXPECT_EQ(result.verdict, Verdict::TOOLCHAIN_MISSING) << result.detail;
  EXPECT_NE(result.detail.find("did not start as an LLVM 19 checker"), std::string::npos) << result.detail;
  std::filesystem::remove(script);
}

TEST(LaneRobustness, ManyModulesThroughSeveralCheckersKeepTheirOrder) {
  REQUIRE_FLAVOR("llvm16");
  LaneOptions options = test_options();
  options.checkers_per_flavor = 3;
  options.run_codegen = false;
  std::vector<LaneModule> modules;
  for (int i = 0; i < 40; ++i)
    modules.push_back(module_from(i % 2 ? "or_disjoint.ll" : "lds_reverse.ll", "llvm16", "gfx90a"));
  auto results = check_modules(modules, options);
  for (int i = 0; i < 40; ++i)
    EXPECT_EQ(results[i].verdict, i % 2 ? Verdict::PARSE_ERROR : Verdict::LLVM_OK) << "module " << i;
}

// A stand-in checker in Python that reads each request whole and hands the module's
// name to `answer` (Python lines that may use `name`, `out` and `os`, `signal`).
std::string python_fake_checker(const std::string& name, const std::string& answer) {
  return fake_checker(name, R"(exec /usr/bin/python3 -c '
import os, signal, sys
out = sys.stdout.buffer
out.write(b"READY\t19.1.7\n"); out.flush()
for line in iter(sys.stdin.buffer.readline, b""):
    verb, size, rest = line.rstrip(b"\n").split(b"\t", 2)
    sys.stdin.buffer.read(int(size))
    name = rest.split(b"\t")[-1]
)" + answer + "\n'");
}

// A checker that dies by a signal while compiling one module (as a segfault in a
// backend would): that module is CRASH, the checker is respawned, the rest get verdicts.
TEST(LaneRobustness, CheckerKilledBySignalOnOneModuleFailsOnlyThatModule) {
  std::string script = python_fake_checker("kemit_segv_checker", R"(
    if b"segv" in name:
        os.kill(os.getpid(), signal.SIGSEGV)
    out.write(b"RESULT\t" + name + b"\t0\t0\t\tfake parse error\n"); out.flush())");
  LaneOptions options = test_options();
  options.jobs = 1;  // one process: the module after the crash needs a respawn
  options.toolchains = default_toolchains();
  options.toolchains[19] = Toolchain{script, "/bin/true"};
  std::string text = read_module("lds_reverse.ll");
  auto results = check_modules({LaneModule{"before", 1, "llvm19", "gfx942", text, false},
                                LaneModule{"segv", 2, "llvm19", "gfx942", text, false},
                                LaneModule{"after", 3, "llvm19", "gfx942", text, false}},
                               options);
  EXPECT_EQ(results[0].verdict, Verdict::PARSE_ERROR) << results[0].detail;
  EXPECT_EQ(results[1].verdict, Verdict::CRASH) << results[1].detail;
  EXPECT_NE(results[1].detail.find("died (signal 11"), std::string::npos) << results[1].detail;
  EXPECT_NE(results[1].detail.find("while compiling this module"), std::string::npos) << results[1].detail;
  EXPECT_EQ(results[2].verdict, Verdict::PARSE_ERROR) << results[2].detail;
  std::filesystem::remove(script);
}

// A checker that answers COMPILE with a passing RESULT and no codegen would be a
// pass without resources: out of protocol, CRASH.
TEST(LaneRobustness, CompileAnsweredWithoutCodegenIsCrash) {
  std::string script = python_fake_checker("kemit_stale_checker", R"(
    out.write(b"RESULT\t" + name + b"\t1\t1\t\t\n"); out.flush())");
  LaneOptions options = test_options();
  options.toolchains = default_toolchains();
  options.toolchains[19] = Toolchain{script, "/bin/true"};
  LaneResult result = check_one(module_from("lds_reverse.ll", "llvm19", "gfx942"), options);
  EXPECT_EQ(result.verdict, Verdict::CRASH) << result.detail;
  EXPECT_NE(result.detail.find("bare RESULT"), std::string::npos) << result.detail;
  std::filesystem::remove(script);
}

TEST(LaneRobustness, WrongDatalayoutIsVerifyError) {
  REQUIRE_FLAVOR("llvm22");
  LaneModule module = module_from("lds_reverse.ll", "llvm22", "gfx942");
  module.text = "target datalayout = \"" + served_flavor("llvm19").datalayout + "\"\n" + module.text;
  LaneResult result = check_one(module);
  EXPECT_EQ(result.verdict, Verdict::VERIFY_ERROR) << result.detail;
  EXPECT_EQ(result.detail.rfind("lane rule: target datalayout", 0), 0u) << result.detail;
}

TEST(LaneRobustness, OwnDatalayoutIsOk) {
  REQUIRE_FLAVOR("llvm22");
  LaneModule module = module_from("lds_reverse.ll", "llvm22", "gfx942");
  module.text = "target datalayout = \"" + served_flavor("llvm22").datalayout + "\"\n" + module.text;
  EXPECT_EQ(check_one(module).verdict, Verdict::LLVM_OK);
}

TEST(LaneRobustness, TargetCpuOtherThanArchIsVerifyError) {
  REQUIRE_FLAVOR("llvm22");
  LaneModule module = module_from("two_kernels.ll", "llvm22", "gfx1100");
  module.text += "attributes #0 = { \"target-cpu\"=\"gfx942\" }\n";
  LaneResult result = check_one(module);
  EXPECT_EQ(result.verdict, Verdict::VERIFY_ERROR) << result.detail;
  EXPECT_NE(result.detail.find("overrides -mcpu=gfx1100"), std::string::npos) << result.detail;
}

TEST(LaneRobustness, UnknownFlavorNameIsACallerError) {
  LaneModule module = module_from("lds_reverse.ll", "llvm18", "gfx90a");
  EXPECT_THROW(check_modules({module}, test_options()), std::invalid_argument);
}

TEST(LaneRobustness, FailureDirGetsTheModuleAndACommand) {
  REQUIRE_FLAVOR("llvm16");
  LaneOptions options = test_options();
  options.failure_dir = (std::filesystem::temp_directory_path() / ("kemit_lane_fail_" + std::to_string(getpid()))).string();
  LaneResult result = check_one(module_from("or_disjoint.ll", "llvm16", "gfx90a"), options);
  ASSERT_EQ(result.verdict, Verdict::PARSE_ERROR);
  std::string file = options.failure_dir + "/or_disjoint.1.llvm16.gfx90a.ll";
  EXPECT_TRUE(std::filesystem::exists(file));
  EXPECT_NE(result.detail.find("reproduce: /usr/lib/llvm-16/bin/llvm-as " + file), std::string::npos) << result.detail;
  std::filesystem::remove_all(options.failure_dir);
}

// The proof phase's workers (kemit_prove --serve): a stand-in that answers PROVEN, dies on the
// config whose canonical text is `die` (a crash message on stderr) and hangs on `hang`.
const char* const FAKE_PROVER = R"(while IFS= read -r line; do
  case "$line" in
    *'"canonical":"die"'*) echo "kemit_prove: a planted crash" >&2; kill -SEGV $$ ;;
    *'"canonical":"hang"'*) exec sleep 600 ;;
    *) echo '{"sections":[{"section":"canonical","verdict":"PROVEN","failures":[]}]}' ;;
  esac
done)";

ProofRequest proof_request(const std::string& canonical) {
  return ProofRequest{"alpha", 1, "gfx942", canonical, "; kemit launch plan 2\n", {}};
}

std::vector<driver::ArchFacts> proof_archs() {
  driver::ArchFacts arch;
  arch.name = "gfx942";
  arch.wave_size = 64;
  arch.lds_bytes = 65536;
  arch.max_block_lanes = 1024;
  arch.max_grid_lanes = 4294967295;
  return {arch};
}

TEST(LaneRobustness, ADeadProverIsUnprovenWithItsStderrAndTheNextConfigGetsAFreshOne) {
  ProofOptions options;
  options.prover = fake_checker("kemit_fake_prover", FAKE_PROVER);
  options.jobs = 1;  // one worker, the requests in order: the one after the crash needs a new process
  auto answers = run_proofs({proof_request("die"), proof_request("fine")}, proof_archs(), options);
  ASSERT_EQ(answers.size(), 2u);
  const SectionProof& dead = answers[0].sections.at("canonical");
  EXPECT_EQ(dead.verdict, "UNPROVEN");
  EXPECT_NE(dead.detail.find("the prover died (signal 11"), std::string::npos) << dead.detail;
  EXPECT_NE(dead.detail.find("kemit_prove: a planted crash"), std::string::npos) << dead.detail;
  EXPECT_EQ(dead.detail.find('\n'), std::string::npos) << dead.detail;  // a verdict's detail is one line
  EXPECT_EQ(answers[1].sections.at("canonical").verdict, "PROVEN") << answers[1].sections.at("canonical").detail;
  std::filesystem::remove(options.prover);
}

TEST(LaneRobustness, AHungProverIsUnprovenNamingItsTimeout) {
  ProofOptions options;
  options.prover = fake_checker("kemit_hung_prover", FAKE_PROVER);
  options.jobs = 1;
  options.timeout = std::chrono::milliseconds(500);
  auto answers = run_proofs({proof_request("hang"), proof_request("fine")}, proof_archs(), options);
  const SectionProof& hung = answers[0].sections.at("canonical");
  EXPECT_EQ(hung.verdict, "UNPROVEN");
  EXPECT_NE(hung.detail.find("the prover did not answer within 500 ms"), std::string::npos) << hung.detail;
  EXPECT_EQ(answers[1].sections.at("canonical").verdict, "PROVEN");
  std::filesystem::remove(options.prover);
}

// The real worker answers request after request in one process; a line that is no request gets
// an error line, and the worker goes on.
TEST(LaneRobustness, OneProverWorkerAnswersLineAfterLine) {
  ProverWorker worker(default_prover_path());
  const std::string request = R"({"canonical": "", "plan": "; kemit launch plan 1\n", "limits": {"max_block_lanes": )"
                              R"(1024, "max_grid_lanes": 4294967295, "lds_bytes": 65536, "wave_size": 64}})";
  std::string why;
  auto first = worker.ask(request, std::chrono::seconds(60), why);
  ASSERT_TRUE(first) << why;
  EXPECT_NE(first->find("plan version 1 has no contract"), std::string::npos) << *first;
  pid_t pid = worker.pid();
  auto malformed = worker.ask("not json", std::chrono::seconds(60), why);
  ASSERT_TRUE(malformed) << why;
  EXPECT_NE(malformed->find("\"error\""), std::string::npos) << *malformed;
  auto again = worker.ask(request, std::chrono::seconds(60), why);
  ASSERT_TRUE(again) << why;
  EXPECT_EQ(*again, *first);
  EXPECT_EQ(worker.pid(), pid);
}

}  // namespace
}  // namespace kemit::lane::testing
