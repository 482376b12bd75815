#include "cleanup_on_signal.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

namespace kemit::run_diff {
namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};
struct sigaction previous[sizeof kSignals / sizeof kSignals[0]];
char* command_text = nullptr;  // owned; read by the handler

// Only async-signal-safe calls: fork, execv, waitpid, sigaction, raise.
void run_cleanup_and_die(int signal_number) {
  if (command_text) {
    char sh[] = "/bin/sh", dash_c[] = "-c";
    char* argv[] = {sh, dash_c, command_text, nullptr};
    pid_t child = fork();
    if (child == 0) {
      execv(sh, argv);
      _exit(127);
    }
    int status = 0;
    if (child > 0)
      while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
  }
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigaction(signal_number, &default_action, nullptr);
  raise(signal_number);
}

}  // namespace

CleanupOnSignal::CleanupOnSignal(const std::string& shell_command) {
  command_text = strdup(shell_command.c_str());
  struct sigaction action {};
  action.sa_handler = run_cleanup_and_die;
  sigemptyset(&action.sa_mask);
  for (int s : kSignals) sigaddset(&action.sa_mask, s);  // one cleanup, even if two signals arrive
  for (size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i) sigaction(kSignals[i], &action, &previous[i]);
}

CleanupOnSignal::~CleanupOnSignal() {
  for (size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i) sigaction(kSignals[i], &previous[i], nullptr);
  free(command_text);
  command_text = nullptr;
}

}  // namespace kemit::run_diff
