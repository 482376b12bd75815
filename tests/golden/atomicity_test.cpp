// A blessing killed at the worst moment (temporary file written and synced, rename not yet
// done) leaves the previous shard intact; two concurrent blessings take turns (flock).
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "kemit/golden/atomic_file.h"
#include "kemit/golden/bless.h"
#include "kemit/golden/shard_io.h"
#include "test_support.h"

namespace kemit::golden {
namespace {

using test::emitted_entry;
using test::make_run;
using test::make_shard;

std::vector<std::filesystem::path> leftover_temporaries(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  for (const auto& item : std::filesystem::directory_iterator(dir))
    if (item.path().filename().string().find(".json.tmp.") != std::string::npos) out.push_back(item.path());
  return out;
}

TEST(Atomicity, BlessKilledBeforeRenameLeavesThePreviousShard) {
  GTEST_FLAG_SET(death_test_style, "fast");  // fork only: the child must see this test's folder
  test::ScopedEnv no_ci("CI", nullptr);
  test::TempDir dir;
  auto path = shard_path(dir.path(), "conv");
  test::write_text(path, serialize_shard(make_shard("conv", {emitted_entry(1)})));
  std::string before = test::read_text(path);
  FreshResults run = make_run("conv", {emitted_entry(1), emitted_entry(2)});

  EXPECT_EXIT(
      {
        test_hooks::set_before_rename_hook([](const std::filesystem::path&) { std::raise(SIGKILL); });
        bless(dir.path(), {run}, {});
        std::exit(0);  // not reached: the hook kills the process
      },
      ::testing::KilledBySignal(SIGKILL), "");

  EXPECT_EQ(test::read_text(path), before);
  auto temps = leftover_temporaries(dir.path());
  ASSERT_EQ(temps.size(), 1u) << "the child should have died with its temporary file written";
  EXPECT_EQ(load_shard(path).entries.size(), 1u);

  // The next blessing (under the lock) removes the dead writer's temporary file.
  BlessReport r = bless(dir.path(), {run}, {});
  ASSERT_FALSE(r.refused()) << describe_bless(r);
  EXPECT_EQ(load_shard(path).entries.size(), 2u);
  EXPECT_TRUE(leftover_temporaries(dir.path()).empty());
}

// Child process body: bless one extra config, optionally dawdling before the rename.
[[noreturn]] void bless_in_child(const std::filesystem::path& dir, std::uint64_t id, bool slow) {
  if (slow)
    test_hooks::set_before_rename_hook(
        [](const std::filesystem::path&) { std::this_thread::sleep_for(std::chrono::milliseconds(600)); });
  FreshResults run = make_run("conv", {emitted_entry(1), emitted_entry(id)}, false);
  BlessReport r = bless(dir, {run}, {});
  ::_exit(r.refused() ? 3 : 0);
}

TEST(Atomicity, ConcurrentBlessingsTakeTurns) {
  test::ScopedEnv no_ci("CI", nullptr);
  test::TempDir dir;
  auto path = shard_path(dir.path(), "conv");
  test::write_text(path, serialize_shard(make_shard("conv", {emitted_entry(1)})));
  pid_t slow = ::fork();
  if (slow == 0) bless_in_child(dir.path(), 2, true);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));  // the slow one holds the lock by now
  pid_t fast = ::fork();
  if (fast == 0) bless_in_child(dir.path(), 3, false);
  int status_slow = 0, status_fast = 0;
  ::waitpid(slow, &status_slow, 0);
  ::waitpid(fast, &status_fast, 0);
  ASSERT_TRUE(WIFEXITED(status_slow) && WEXITSTATUS(status_slow) == 0);
  ASSERT_TRUE(WIFEXITED(status_fast) && WEXITSTATUS(status_fast) == 0);
  Shard after = load_shard(path);
  EXPECT_NE(after.find(2), nullptr) << "the slow blessing was lost";
  EXPECT_NE(after.find(3), nullptr) << "the fast blessing was lost";
}

TEST(Atomicity, WriteReplacesTheFileInOneStep) {
  test::TempDir dir;
  auto path = dir.path() / "file.json";
  write_file_atomically(path, "old\n");
  write_file_atomically(path, "new\n");
  EXPECT_EQ(test::read_text(path), "new\n");
  EXPECT_TRUE(leftover_temporaries(dir.path()).empty());
}

}  // namespace
}  // namespace kemit::golden
