#include "kemit/tooling/locations.h"

#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include "kemit/tooling/version.h"

#ifndef KEMIT_BUILT_FROM_ROOT
#error "KEMIT_BUILT_FROM_ROOT must be defined by the build"
#endif

namespace kemit::tooling {
namespace fs = std::filesystem;

namespace {

std::string normal(const fs::path& path) {
  std::string text = fs::absolute(path).lexically_normal().string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

bool is_checkout(const fs::path& dir) {
  std::error_code ignored;
  return fs::is_directory(dir / "py_engine" / "kemit", ignored) && fs::is_directory(dir / "parity" / "configs", ignored);
}

std::string first_folder_up(fs::path dir, bool (*holds)(const fs::path&)) {
  for (dir = fs::absolute(dir).lexically_normal();; dir = dir.parent_path()) {
    if (holds(dir)) return normal(dir);
    if (dir == dir.root_path() || dir.empty()) return "";
  }
}

bool is_build(const fs::path& dir) {
  std::error_code ignored;
  return fs::is_regular_file(dir / "CMakeCache.txt", ignored);
}

std::string existing_folder(const std::string& flag, const std::string& value) {
  std::error_code ignored;
  if (!fs::is_directory(value, ignored))
    throw std::invalid_argument(flag + " " + value + ": no such folder");
  return normal(value);
}

std::string running_executable() {
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? "" : self.string();
}

}  // namespace

std::string checkout_above(const std::string& start) { return first_folder_up(start, is_checkout); }

Locations locate_from(const LocationFlags& flags, const std::string& cwd, const std::string& executable) {
  Locations where;
  if (!flags.root.empty()) {
    where.root = existing_folder("--root", flags.root);
    where.root_origin = "--root";
  } else if (std::string found = checkout_above(cwd); !found.empty()) {
    where.root = found;
    where.root_origin = "cwd";
  } else if (is_checkout(KEMIT_BUILT_FROM_ROOT)) {
    where.root = normal(KEMIT_BUILT_FROM_ROOT);
    where.root_origin = "built-in";
  } else {
    throw std::invalid_argument("no kemit checkout at or above " + cwd + ", and the tree this tool was built from (" +
                                KEMIT_BUILT_FROM_ROOT + ") is gone: run it inside a checkout or pass --root DIR");
  }
  if (!flags.build.empty()) {
    where.build = existing_folder("--build", flags.build);
    where.build_origin = "--build";
  } else if (std::string found = executable.empty() ? "" : first_folder_up(fs::path(executable).parent_path(), is_build);
             !found.empty()) {
    where.build = found;
    where.build_origin = "tool";
  } else {
    where.build = normal(KEMIT_BUILT_IN_BUILD);
    where.build_origin = "built-in";
  }
  if (!flags.configs.empty()) {
    where.configs = existing_folder("--configs", flags.configs);
    where.configs_origin = "--configs";
  } else {
    where.configs = where.root + "/parity/configs";
    where.configs_origin = "tree";
  }
  return where;
}

Locations locate(const LocationFlags& flags) {
  return locate_from(flags, fs::current_path().string(), running_executable());
}

std::string describe(const Locations& where) {
  return "tree " + where.root + " (" + where.root_origin + "), build " + where.build + " (" + where.build_origin +
         "), configs " + where.configs + " (" + where.configs_origin + ")";
}

std::string header_line(const std::string& tool, const Locations& where) {
  return tool + " " + version() + " (git " + git_describe() + "): " + describe(where);
}

std::vector<std::string> suggested_flags(const Locations& where) {
  std::vector<std::string> flags;
  if (where.root_origin != "cwd") flags.insert(flags.end(), {"--root", where.root});
  if (where.build_origin == "--build") flags.insert(flags.end(), {"--build", where.build});
  if (where.configs_origin == "--configs") flags.insert(flags.end(), {"--configs", where.configs});
  return flags;
}

std::string relative_to(const std::string& path, const std::string& root) {
  std::string relative = fs::path(path).lexically_normal().lexically_relative(fs::path(root).lexically_normal()).string();
  return relative.empty() || relative.rfind("..", 0) == 0 ? path : relative;
}

std::string shell_join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& word : words) {
    bool plain = !word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                         "0123456789-_./=:,+@%") == std::string::npos;
    std::string quoted = plain ? word : "'";
    if (!plain) {
      for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      quoted += "'";
    }
    out += (out.empty() ? "" : " ") + quoted;
  }
  return out;
}

}  // namespace kemit::tooling
