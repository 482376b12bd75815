// The engines' answers in the result cache (docs/run_diff.md "Engine answers"): a warm run_diff
// or check_llvm over an unchanged tree asks no engine and starts no worker.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kemit/driver/worker_pool.h"
#include "kemit/lane_support/result_cache.h"

namespace kemit::lane_support {

// Bump when what the pool asks or keeps changes (the request's shape, what is remembered).
inline constexpr int kEngineAnswersVersion = 1;

// Everything that determines an engine's answers besides the request: for the default C++
// worker the sha256 of its binary; for the default Python worker a digest of its sources
// (py_engine/**.py and .json), the tables it reads (tables/*.json) and its interpreter (path and
// binary's sha256); both with the command line and PYTHONPATH (not where byte code is kept: Python
// checks it against the sources). nullopt for a --py-cmd /
// --cpp-cmd: what such a command runs cannot be known, so its answers are never cached.
std::optional<std::string> engine_identity(const driver::EngineCommand& command, bool is_default,
                                           const driver::EngineLocations& where, ResultCache& digests);

// The pool's memo over the result cache. Each answer is an entry keyed by the engine's name and
// identity, the protocol version and the request (family, config line, arch and flavor set). The
// cache verifies each entry's checksum; an answer the pool cannot use comes back through refuse():
// reported as corrupt, deleted, and asked again.
// KEMIT_ENGINE_ANSWERS=off (or 0) asks the engines although the cache may hold their answers (the
// other lanes' entries are still used): to measure what the cache saves (bench/gate). Unset, empty,
// on or 1: on. Throws CacheError naming the variable for anything else.
bool engine_answers_wanted();

class EngineAnswers : public driver::AnswerMemo {
 public:
  EngineAnswers(ResultCache& cache, std::vector<std::string> names,
                std::vector<std::optional<std::string>> identities);
  std::optional<std::string> recall(size_t engine, const nlohmann::json& request) override;
  void remember(size_t engine, const nlohmann::json& request, const std::string& answer) override;
  void refuse(size_t engine, const nlohmann::json& request, const std::string& why) override;

  // "engine answers: py 791 from the cache, 0 asked; cpp 791 from the cache, 0 asked (no worker
  // started)", then a line
  // "cache: corrupt cache entry ... (why): deleted and recomputed" per problem of the cache.
  std::vector<std::string> notes(size_t workers_started) const;

 private:
  std::string summary(size_t workers_started) const;
  std::optional<std::string> key(size_t engine, const nlohmann::json& request) const;

  ResultCache& cache_;
  std::vector<std::string> names_;
  std::vector<std::optional<std::string>> identities_;
  bool wanted_;
  std::vector<size_t> recalled_;  // per engine (hellos not counted)
  std::vector<size_t> asked_;
};

}  // namespace kemit::lane_support
