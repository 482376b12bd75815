#include "parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace kemit::lane {

int default_jobs() { return std::max(1u, std::thread::hardware_concurrency()); }

void parallel_for(size_t count, int workers, const std::function<void(size_t)>& job) {
  std::atomic<size_t> next{0};
  auto drain = [&] {
    for (size_t index = next++; index < count; index = next++) job(index);
  };
  size_t threads = std::min<size_t>(count, static_cast<size_t>(std::max(1, workers)));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(drain);
  drain();  // the calling thread works too
  for (auto& thread : pool) thread.join();
}

}  // namespace kemit::lane
