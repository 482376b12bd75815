// WorkerProcess::read_lines hands on whole lines only, in order, whatever the reads cut: an answer
// split over several reads, several answers in one read, and an answer that fills the buffer alone
// (moved out whole) must all come out as the worker wrote them.
#include <poll.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kemit/driver/worker_process.h"

namespace kemit::driver {
namespace {

// Reads until the worker closes its output; every line as read_lines gave it.
std::vector<std::string> all_lines(WorkerProcess& worker) {
  std::vector<std::string> lines;
  bool open = true;
  while (open) {
    pollfd fd{worker.stdout_fd(), POLLIN, 0};
    poll(&fd, 1, 5000);
    open = worker.read_lines(lines);
  }
  return lines;
}

TEST(WorkerProcess, LinesCutAnywhereByTheReadsComeOutWholeAndInOrder) {
  // A line cut in two by a pause, two lines in one write, then a long line alone in the pipe.
  std::string script =
      "printf 'one\\ntw'; sleep 0.2; printf 'o\\nthree\\nfour\\n'; sleep 0.2; "
      "head -c 200000 /dev/zero | tr '\\0' x; printf '\\n'; sleep 0.2; printf 'tail\\n'";
  WorkerProcess worker({"test", {"/bin/sh", "-c", script}, {}});
  std::vector<std::string> lines = all_lines(worker);
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0], "one");
  EXPECT_EQ(lines[1], "two");
  EXPECT_EQ(lines[2], "three");
  EXPECT_EQ(lines[3], "four");
  EXPECT_EQ(lines[4], std::string(200000, 'x'));
  EXPECT_EQ(lines[5], "tail");
}

TEST(WorkerProcess, AnUnfinishedLastLineIsNeverHandedOn) {
  WorkerProcess worker({"test", {"/bin/sh", "-c", "printf 'whole\\nhalf'"}, {}});
  std::vector<std::string> lines = all_lines(worker);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "whole");
}

}  // namespace
}  // namespace kemit::driver
