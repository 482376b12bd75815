// Digests that go into the lanes' cache keys: a folder of sources, and a (large) binary.
#pragma once
#include <string>

#include "kemit/lane_support/result_cache.h"

namespace kemit::lane_support {

// sha256 over every regular file under `folder` whose name ends in `extension` (no __pycache__),
// by relative path and content, in path order: a lane's Python sources. `display` names the
// folder in messages. Throws std::runtime_error when a file cannot be read.
std::string tree_digest(const std::string& folder, const std::string& display, const std::string& extension);

// file_sha256 of a file, remembered in `memo` under (path, size, mtime, inode) across runs, so that
// a warm run does not read a large executable again. Throws std::runtime_error when the file is
// missing, CacheError when it is unreadable.
std::string file_digest(ResultCache& memo, const std::string& path);

}  // namespace kemit::lane_support
