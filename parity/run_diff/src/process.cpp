#include "process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "kemit/driver/engine_command.h"
#include "kemit/tooling/locations.h"

extern char** environ;

namespace kemit::run_diff {
namespace {

std::string slurp_and_close(int fd) {
  std::string text;
  lseek(fd, 0, SEEK_SET);
  char buffer[65536];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(n));
  close(fd);
  return text;
}

int temporary_fd() {
  char name[] = "/tmp/kemit_run_diff_XXXXXX";
  int fd = mkstemp(name);
  if (fd < 0) throw driver::InfrastructureError(std::string("cannot create a temporary file in /tmp: ") + std::strerror(errno));
  unlink(name);
  return fd;
}

}  // namespace

CommandResult run_command(const std::vector<std::string>& argv,
                          const std::vector<std::pair<std::string, std::string>>& env, const std::string& cwd) {
  CommandResult result;
  int out_fd = temporary_fd(), err_fd = temporary_fd();
  std::map<std::string, std::string> environment;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string::npos) environment[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& [key, value] : env) environment[key] = value;
  std::vector<std::string> env_strings;
  for (const auto& [key, value] : environment) env_strings.push_back(key + "=" + value);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    close(out_fd);
    close(err_fd);
    result.err = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return result;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = slurp_and_close(out_fd);
  result.err = slurp_and_close(err_fd);
  return result;
}

std::string shell_quoted(const std::vector<std::string>& argv) { return tooling::shell_join(argv); }

}  // namespace kemit::run_diff
