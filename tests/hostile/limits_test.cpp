// The input limits (input_limits/, docs/limits.md): regular files only, without blocking on a
// FIFO or reading a device forever; JSON nesting and number range checked in one linear pass
// before any tree is built; long texts cut with a count of what was cut.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kemit/input_limits.h"

namespace kemit::limits {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    char pattern[] = "/tmp/kemit_limits_XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string problem_of(const fs::path& path) {
  try {
    read_regular_file(path, "shown/name.json");
  } catch (const InputLimitError& error) {
    EXPECT_EQ(error.file(), "shown/name.json");
    return error.what();
  }
  return "";
}

TEST(ReadRegularFile, ReadsARegularFileAndASymlinkToOne) {
  TempDir dir;
  std::ofstream(dir.path / "a.json") << "{}\n";
  fs::create_symlink(dir.path / "a.json", dir.path / "link.json");
  EXPECT_EQ(read_regular_file(dir.path / "a.json", "a"), "{}\n");
  EXPECT_EQ(read_regular_file(dir.path / "link.json", "a"), "{}\n");
}

TEST(ReadRegularFile, RefusesAFifoWithoutWaitingForAWriter) {
  TempDir dir;
  ASSERT_EQ(mkfifo((dir.path / "fifo.json").c_str(), 0644), 0);
  EXPECT_EQ(problem_of(dir.path / "fifo.json"), "shown/name.json: is a FIFO; kemit reads only regular files");
}

TEST(ReadRegularFile, RefusesADeviceBehindASymlink) {
  TempDir dir;
  fs::create_symlink("/dev/zero", dir.path / "zero.json");
  EXPECT_EQ(problem_of(dir.path / "zero.json"), "shown/name.json: is a character device; kemit reads only regular files");
}

TEST(ReadRegularFile, RefusesADirectoryAndAMissingFile) {
  TempDir dir;
  fs::create_directory(dir.path / "conv.json");
  EXPECT_EQ(problem_of(dir.path / "conv.json"), "shown/name.json: is a directory; kemit reads only regular files");
  EXPECT_NE(problem_of(dir.path / "absent.json").find("cannot open the file: No such file"), std::string::npos);
}

TEST(ReadRegularFile, RefusesAFileOverTheSizeLimit) {
  TempDir dir;
  fs::path big = dir.path / "big.json";
  std::ofstream(big).close();
  fs::resize_file(big, kMaxFileBytes + 1);  // sparse: no disk used
  EXPECT_EQ(problem_of(big), "shown/name.json: the file is larger than the input limit of 256 MiB");
}

TEST(JsonLimits, NestingPastTheLimitIsFoundAtItsLine) {
  std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_FALSE(find_json_limit_breach(ok));
  std::string deep = "{\n\"a\":\n" + std::string(100000, '[') + std::string(100000, ']') + "}";
  auto breach = find_json_limit_breach(deep);
  ASSERT_TRUE(breach);
  EXPECT_EQ(breach->line, 3u);
  EXPECT_EQ(breach->problem, "nesting deeper than the input limit of 64 levels");
}

TEST(JsonLimits, BracketsAndDigitsInsideStringsAreText) {
  EXPECT_FALSE(find_json_limit_breach("{\"k\": \"" + std::string(1000, '[') + " 1e999 \\\" [[\"}"));
}

TEST(JsonLimits, NumbersOutOfRangeAreFoundAtTheirLine) {
  auto breach = find_json_limit_breach("{\n  \"vec\": 1e400\n}");
  ASSERT_TRUE(breach);
  EXPECT_EQ(breach->line, 2u);
  EXPECT_EQ(breach->problem, "the number 1e400 is out of range (not finite as a double)");
  EXPECT_EQ(find_json_limit_breach("[18446744073709551616]")->problem,
            "the integer 18446744073709551616 is out of range (above 2^64-1)");
  EXPECT_EQ(find_json_limit_breach("[-9223372036854775809]")->problem,
            "the integer -9223372036854775809 is out of range (below -2^63)");
  EXPECT_FALSE(find_json_limit_breach("[18446744073709551615, -9223372036854775808, 1e308, 1e-400, -0.5]"));
}

TEST(JsonLimits, CheckThrowsWithFileLineAndLimit) {
  try {
    check_json_limits("[\n\n1e400]", "parity/configs/x.json");
    FAIL() << "no error";
  } catch (const InputLimitError& error) {
    EXPECT_STREQ(error.what(), "parity/configs/x.json:3: the number 1e400 is out of range (not finite as a double)");
  }
}

TEST(CutText, KeepsShortTextAndSaysHowMuchWasCut) {
  EXPECT_EQ(cut_text("short", 10), "short");
  EXPECT_EQ(cut_text(std::string(30, 'x'), 10), std::string(10, 'x') + "... [20 more bytes cut]");
  EXPECT_EQ(cut_text("ab\xC3\xA9", 3), "ab... [2 more bytes cut]");  // never half a character
}

// Whatever bytes come in, what goes to a writer is valid UTF-8: each maximal ill-formed subpart
// is one U+FFFD (the Unicode standard's recommendation; Python's errors="replace" does the same).
TEST(CutText, ReplacesInvalidUtf8WithTheReplacementCharacter) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(cut_text("a\xFF" "b", kNoCut), "a" + fffd + "b");
  EXPECT_EQ(cut_text("a\xC3", kNoCut), "a" + fffd);                   // a character split at the end
  EXPECT_EQ(cut_text("\xE2\x82" "x", kNoCut), fffd + "x");            // a truncated 3-byte sequence: one U+FFFD
  EXPECT_EQ(cut_text("\xED\xA0\x80", kNoCut), fffd + fffd + fffd);    // a surrogate is not UTF-8
  EXPECT_EQ(cut_text("\xC0\xAF", kNoCut), fffd + fffd);               // an overlong '/'
  EXPECT_EQ(cut_text("\xF4\x90\x80\x80", kNoCut), fffd + fffd + fffd + fffd);  // above U+10FFFF
  EXPECT_EQ(cut_text("\xF0\x9F\x98\x80 ok", kNoCut), "\xF0\x9F\x98\x80 ok");    // valid text is untouched
  for (const std::string& raw : std::vector<std::string>{"\xFF\xFE", "x\xE2\x82", "\xC3(", std::string(400, '\x80')})
    EXPECT_TRUE(is_valid_utf8(cut_text(raw, 7))) << raw;
  EXPECT_FALSE(is_valid_utf8("\xC3"));
}

TEST(CutText, CountsWhatTheCallerDroppedBefore) {
  EXPECT_EQ(cut_text("abc", 10, 5), "abc... [5 more bytes cut]");
  EXPECT_EQ(cut_text("abcdef", 3, 5), "abc... [8 more bytes cut]");
}

TEST(UnsafeWriteTarget, RefusesSymlinksAndSpecialFiles) {
  TempDir dir;
  fs::create_symlink(dir.path / "elsewhere", dir.path / ".golden.lock");
  EXPECT_NE(unsafe_write_target(dir.path / ".golden.lock").find("is a symlink"), std::string::npos);
  ASSERT_EQ(mkfifo((dir.path / "f").c_str(), 0644), 0);
  EXPECT_EQ(unsafe_write_target(dir.path / "f"), "is a FIFO, not a regular file");
  std::ofstream(dir.path / "plain").close();
  EXPECT_EQ(unsafe_write_target(dir.path / "plain"), "");
  EXPECT_EQ(unsafe_write_target(dir.path / "absent"), "");
}

}  // namespace
}  // namespace kemit::limits
