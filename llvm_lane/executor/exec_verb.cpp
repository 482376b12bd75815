// EXEC verb of kemit_llcheckN (exec_verb.h). Request, after the header line and the IR bytes:
//   LAUNCH\t<kernel or ->\t<gx> <gy> <gz>\t<bx> <by> <bz>\t<buffers>\t<scalars>
//   SCALAR\t<name>\t<integer>                 x scalars
//   BUFFER\t<name>\t<byte count>  + the bytes  x buffers
// Answer: EXECUTED\t<name>\t<ok 0|1>\t<lane instructions>\t<wave instructions>\t<seconds>\t<error>
// then, when ok, every buffer back in request order: BUFFER\t<name>\t<byte count> + the bytes.
#include "exec_verb.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <vector>

#include "executor.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#ifndef KEMIT_MMA_LAYOUT_DIR
#define KEMIT_MMA_LAYOUT_DIR "llvm_lane/mma_layouts"
#endif

namespace kemit::exec {
namespace {

constexpr size_t kMaxBytes = size_t(1) << 30;

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream stream(line);
  std::string field;
  while (std::getline(stream, field, '\t')) fields.push_back(field);
  return fields;
}

bool read_count(const std::string& text, size_t& count) {
  char* end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end || value > kMaxBytes) return false;
  count = size_t(value);
  return true;
}

bool read_bytes(std::istream& in, size_t count, std::string& out) {
  out.assign(count, '\0');
  return count == 0 || bool(in.read(&out[0], std::streamsize(count)));
}

bool read_triple(const std::string& text, int64_t out[3]) {
  std::stringstream stream(text);
  return bool(stream >> out[0] >> out[1] >> out[2]);
}

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '\t' ? std::string("\\t") : c == '\n' ? std::string("\\n") : c == '\\' ? std::string("\\\\") : std::string(1, c);
  return out;
}

void write(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

bool read_launch(std::istream& in, Launch& launch) {
  std::string line;
  if (!std::getline(in, line)) return false;
  std::vector<std::string> fields = split_tabs(line);
  size_t buffers = 0, scalars = 0;
  if (fields.size() != 6 || fields[0] != "LAUNCH" || !read_triple(fields[2], launch.grid) ||
      !read_triple(fields[3], launch.block) || !read_count(fields[4], buffers) || !read_count(fields[5], scalars))
    return false;
  launch.kernel = fields[1] == "-" ? "" : fields[1];
  for (size_t i = 0; i < scalars; ++i) {
    if (!std::getline(in, line)) return false;
    fields = split_tabs(line);
    if (fields.size() != 3 || fields[0] != "SCALAR") return false;
    launch.scalars.push_back({fields[1], std::strtoll(fields[2].c_str(), nullptr, 10)});
  }
  for (size_t i = 0; i < buffers; ++i) {
    size_t count = 0;
    std::string bytes;
    if (!std::getline(in, line)) return false;
    fields = split_tabs(line);
    if (fields.size() != 3 || fields[0] != "BUFFER" || !read_count(fields[2], count) || !read_bytes(in, count, bytes))
      return false;
    launch.buffers.push_back({fields[1], std::vector<uint8_t>(bytes.begin(), bytes.end())});
  }
  return true;
}

}  // namespace

bool serve_exec_request(const std::string& header, std::istream& in) {
  std::vector<std::string> fields = split_tabs(header);
  size_t ir_bytes = 0;
  std::string text;
  if (fields.size() != 3 || !read_count(fields[1], ir_bytes) || !read_bytes(in, ir_bytes, text)) return false;
  const std::string& name = fields[2];
  Launch launch;
  if (!read_launch(in, launch)) return false;
  llvm::LLVMContext context;
  llvm::SMDiagnostic parse_error;
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(text, name);
  std::unique_ptr<llvm::Module> module = llvm::parseAssembly(buffer->getMemBufferRef(), parse_error, context);
  Outcome outcome;
  if (!module) {
    std::string diagnostic;
    llvm::raw_string_ostream stream(diagnostic);
    parse_error.print(nullptr, stream, false);
    outcome.error = "parse error: " + stream.str();
  } else {
    const char* layout_dir = std::getenv("KEMIT_MMA_LAYOUT_DIR");
    outcome = execute(*module, launch, layout_dir && *layout_dir ? layout_dir : KEMIT_MMA_LAYOUT_DIR);
  }
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.6f", outcome.seconds);
  write("EXECUTED\t" + escape(name) + "\t" + (outcome.ok ? "1" : "0") + "\t" + std::to_string(outcome.lane_instructions) +
        "\t" + std::to_string(outcome.wave_instructions) + "\t" + seconds + "\t" + escape(outcome.error) + "\n");
  if (outcome.ok)
    for (const Buffer& out : launch.buffers) {
      write("BUFFER\t" + escape(out.name) + "\t" + std::to_string(out.bytes.size()) + "\n");
      std::fwrite(out.bytes.data(), 1, out.bytes.size(), stdout);
    }
  std::fflush(stdout);
  return true;
}

}  // namespace kemit::exec
