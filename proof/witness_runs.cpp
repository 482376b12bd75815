#include "witness_runs.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "kemit/interp/interp.h"
#include "kemit/ir/parser.h"
#include "kemit/proof/witness_launch.h"

namespace kemit::proof {
namespace {

// A witness may pick a grid whose workgroup loops for billions of trips: past this the run is
// stopped and the verdict says so (the verdict itself stands on the proof).
constexpr int kRunSeconds = 10;

std::string run_text(const witness::WorkgroupRun& run) {
  std::string where = "workgroup " + witness::dims_text(run.workgroup);
  if (run.ok) return where + " ran to its end without a failure";
  return where + " workitem " + std::to_string(run.workitem) + ": " + run.error;
}

// In the child: the interpreter's run of the launch's workgroups.
std::string interpret(const std::string& canonical, const witness::Launch& launch) {
  try {
    for (const ir::Kernel& kernel : ir::parse_module(canonical))
      if (kernel.name == launch.kernel) {
        interp::WitnessReport report = interp::run_witness(kernel, launch);
        std::string text;
        for (const auto& run : report.runs) text += (text.empty() ? "" : "; ") + run_text(run);
        return text;
      }
    return "the module has no kernel @" + launch.kernel;
  } catch (const std::exception& error) {
    return std::string("refused: ") + error.what();
  }
}

// The interpreter's run in a child process, so a run past kRunSeconds is stopped without the prover.
std::string interpret_in_child(const std::string& canonical, const witness::Launch& launch) {
  int ends[2];
  if (pipe(ends) != 0) return "not made (no pipe)";
  pid_t child = fork();
  if (child < 0) return close(ends[0]), close(ends[1]), "not made (no fork)";
  if (child == 0) {
    close(ends[0]);
    std::string text = interpret(canonical, launch);
    for (size_t done = 0; done < text.size();) {
      ssize_t n = write(ends[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += size_t(n);
    }
    _exit(0);
  }
  close(ends[1]);
  std::string text;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kRunSeconds);
  bool stopped = false;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    pollfd readable{ends[0], POLLIN, 0};
    if (left <= 0 || poll(&readable, 1, int(left)) <= 0) {
      stopped = true;
      break;
    }
    char chunk[4096];
    ssize_t n = read(ends[0], chunk, sizeof chunk);
    if (n <= 0) break;
    text.append(chunk, size_t(n));
  }
  close(ends[0]);
  if (stopped) kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  if (stopped) return "stopped after " + std::to_string(kRunSeconds) + " s (the witness's workgroup runs too long to show)";
  if (!WIFEXITED(status) || text.empty()) return "the interpreter ended without an outcome";
  return text;
}

}  // namespace

const WitnessRun& WitnessRunner::run(const std::string& witness_json) {
  auto found = runs_.find(witness_json);
  if (found != runs_.end()) return found->second;
  WitnessRun& made = runs_[witness_json];
  witness::Launch launch;
  try {
    launch = launch_at(parse_plan(plan_), witness_point(witness_json));
  } catch (const std::invalid_argument& error) {
    made.outcome = std::string("witness run (interpreter): not made: ") + error.what();
    return made;
  }
  made.launch = launch_json(launch);
  made.outcome = "witness run (interpreter): " + interpret_in_child(canonical_, launch);
  return made;
}

}  // namespace kemit::proof
