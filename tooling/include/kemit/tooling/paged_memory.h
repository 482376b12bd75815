// Lazily materialised buffers for witness runs at real size (docs/numerics.md, "Witness runs at
// real size"): a buffer of up to 2^40 bytes exists only as the pages a run touches. A page is made
// on first touch with every element's initial value a fixed function of (seed, buffer name,
// element index), so the interpreter (interp/), the executor (llvm_lane/executor/) and the
// Python reference of the sampled outputs (parity/numerics/witness.py) see the same inputs.
//
// Header-only and free of exceptions: the executor is compiled with LLVM's -fno-exceptions.
// It belongs to neither side (tooling/): it is the harness's input, not an opinion on the IR.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kemit::witness {

constexpr uint64_t kDefaultPageBytes = 65536;
constexpr uint64_t kMaxBufferBytes = uint64_t(1) << 40;

// The element kind whose values fill a buffer's pages: the values are k / 64 for an integer k in
// [-128, 128) (exact in f32, f16 and bf16), the integer k itself for i32, the byte for u8.
enum class Fill { f32, f16, bf16, i32, u8 };

inline bool fill_of(const std::string& name, Fill& out) {
  static const std::pair<const char*, Fill> kinds[] = {
      {"f32", Fill::f32}, {"f16", Fill::f16}, {"bf16", Fill::bf16}, {"i32", Fill::i32}, {"u8", Fill::u8}};
  for (const auto& [text, kind] : kinds)
    if (name == text) return out = kind, true;
  return false;
}

inline uint64_t fill_element_bytes(Fill kind) {
  return kind == Fill::f32 || kind == Fill::i32 ? 4 : kind == Fill::u8 ? 1 : 2;
}

// SplitMix64's finaliser (Steele, Lea, Flood 2014): every input bit reaches every output bit.
inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// FNV-1a over the buffer's name: two buffers of one launch get different values.
inline uint64_t name_hash(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

inline uint64_t buffer_key(uint64_t seed, const std::string& name) { return mix64(seed ^ name_hash(name)); }

// The bit pattern of element `index` of the buffer with `key`, in the buffer's element kind.
inline uint64_t fill_bits(Fill kind, uint64_t key, uint64_t index) {
  uint64_t h = mix64(key ^ index);
  int k = int(h >> 56) - 128;
  float value = float(k) / 64.0f;
  uint32_t f32 = 0;
  std::memcpy(&f32, &value, 4);
  switch (kind) {
    case Fill::f32: return f32;
    case Fill::bf16: return f32 >> 16;  // exact: k / 64 has at most 8 significant bits
    case Fill::f16: {
      if (k == 0) return 0;  // every other value is normal in f16 (|k / 64| >= 2^-6)
      uint32_t sign = f32 >> 31, exponent = (f32 >> 23) & 0xff, mantissa = f32 & 0x7fffff;
      return (sign << 15) | ((exponent - 127 + 15) << 10) | (mantissa >> 13);
    }
    case Fill::i32: return uint32_t(k);
    case Fill::u8: return h >> 56;
  }
  return 0;
}

// One buffer, its pages made on first touch. Callers check bounds before reading or writing.
class PagedBuffer {
 public:
  struct Page {
    std::unique_ptr<uint8_t[]> bytes;
    std::vector<uint64_t> written;  // one bit per byte: what the run stored
  };

  PagedBuffer(std::string name, uint64_t bytes, Fill fill, uint64_t seed, uint64_t page_bytes)
      : name_(std::move(name)), bytes_(bytes), fill_(fill), key_(buffer_key(seed, name_)), page_bytes_(page_bytes) {}

  const std::string& name() const { return name_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t page_bytes() const { return page_bytes_; }
  const std::map<uint64_t, Page>& pages() const { return pages_; }

  void read(uint64_t offset, void* out, uint64_t count) { copy(offset, static_cast<uint8_t*>(out), count, false); }
  void write(uint64_t offset, const void* in, uint64_t count) {
    copy(offset, const_cast<uint8_t*>(static_cast<const uint8_t*>(in)), count, true);
  }

 private:
  // Byte by page: an access may straddle two pages when its align promise is smaller than it.
  void copy(uint64_t offset, uint8_t* data, uint64_t count, bool store) {
    while (count > 0) {
      uint64_t index = offset / page_bytes_, within = offset % page_bytes_;
      uint64_t run = page_bytes_ - within < count ? page_bytes_ - within : count;
      Page& target = page(index);
      if (store) {
        std::memcpy(target.bytes.get() + within, data, run);
        for (uint64_t b = within; b < within + run; ++b) target.written[b / 64] |= uint64_t(1) << (b % 64);
      } else {
        std::memcpy(data, target.bytes.get() + within, run);
      }
      offset += run, data += run, count -= run;
    }
  }

  Page& page(uint64_t index) {
    auto found = pages_.find(index);
    if (found != pages_.end()) return found->second;
    Page& made = pages_[index];
    made.bytes.reset(new uint8_t[page_bytes_]);
    made.written.assign((page_bytes_ + 63) / 64, 0);
    uint64_t element = fill_element_bytes(fill_), first = index * page_bytes_;
    for (uint64_t at = 0; at < page_bytes_; at += element) {
      uint64_t bits = fill_bits(fill_, key_, (first + at) / element);
      std::memcpy(made.bytes.get() + at, &bits, element);  // little-endian host, as the GPU
    }
    return made;
  }

  std::string name_;
  uint64_t bytes_;
  Fill fill_;
  uint64_t key_;
  uint64_t page_bytes_;
  std::map<uint64_t, Page> pages_;
};

}  // namespace kemit::witness
