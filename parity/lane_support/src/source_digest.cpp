#include "kemit/lane_support/source_digest.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include <sys/stat.h>

#include "kemit/driver/sha256.h"
#include "kemit/input_limits.h"

namespace kemit::lane_support {

std::string tree_digest(const std::string& folder, const std::string& display, const std::string& extension) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
    const std::string path = entry.path().string();
    if (entry.is_regular_file() && path.size() >= extension.size() &&
        path.compare(path.size() - extension.size(), extension.size(), extension) == 0 &&
        path.find("__pycache__") == std::string::npos)
      files.push_back(std::filesystem::relative(entry.path(), folder).string());
  }
  std::sort(files.begin(), files.end());
  std::string all;
  for (const auto& file : files) {
    std::string text = limits::read_regular_file(std::filesystem::path(folder) / file, display + "/" + file);
    all += file + '\0' + driver::sha256_hex(text) + '\0';
  }
  return driver::sha256_hex(all);
}

std::string file_digest(ResultCache& memo, const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw std::runtime_error(path + " is missing");
  const std::string key = ResultCache::key({"file digest 1", path, std::to_string(info.st_size),
                                            std::to_string(info.st_mtim.tv_sec), std::to_string(info.st_mtim.tv_nsec),
                                            std::to_string(info.st_ino)});
  if (auto stored = memo.get(key)) {
    if (stored->size() == 64 && stored->find_first_not_of("0123456789abcdef") == std::string::npos) return *stored;
    memo.reject(key, "its value is not a sha256");
  }
  std::string digest = file_sha256(path);
  memo.put(key, digest);
  return digest;
}

}  // namespace kemit::lane_support
