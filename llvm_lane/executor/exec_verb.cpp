// EXEC verb of kemit_llcheckN (exec_verb.h). Request, after the header line and the IR bytes:
//   LAUNCH\t<kernel or ->\t<gx> <gy> <gz>\t<bx> <by> <bz>\t<buffers>\t<scalars>[\t<schedule>[\t<races 0|1>]]
//     (schedule: in-order (the default), reverse, random:SEED; races: 1 (the default) watches every
//     byte, and a race fails the run with an error that begins "race: ")
//   SCALAR\t<name>\t<integer>                 x scalars
//   BUFFER\t<name>\t<byte count>  + the bytes  x buffers
// Answer: EXECUTED\t<name>\t<ok 0|1>\t<lane instructions>\t<wave instructions>\t<seconds>\t<error>
// then, when ok, every buffer back in request order: BUFFER\t<name>\t<byte count> + the bytes.
//
// DIGEST verb: after the header line (DIGEST\t<bytes>\t<name>) the IR bytes. Answer:
//   DIGESTED\t<name>\t<ok 0|1>\t<sha256 of every kernel's name and program fingerprint>\t<error>
// Two texts with one digest run alike on every launch, whichever LLVM parsed them: the numerics
// lane runs such a flavor's sections once (docs/numerics.md). The decoded kernels stay cached, so
// an EXEC of the same text that follows parses and decodes nothing.
// The last few modules stay parsed and their kernels decoded (KernelCache): the same name and text
// again runs without parsing or decoding.
//
// WITNESS verb (a witness run at real size, docs/numerics.md): after the header line and the IR
// bytes, one line of JSON, the launch description kemit_cpp.witness takes as a dict. Answer:
//   WITNESSED\t<name>\t<ok 0|1>\t<report byte count>\t<error>   then the report's JSON, then per
//   buffer in the order of the report's "buffers" (by name), per page of its "written" list: the
//   page's bytes, then its written-byte bits (page bytes / 8, LSB first).
#include "exec_verb.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "executor.h"
#include "program.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
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
  if (fields.size() < 6 || fields.size() > 8 || fields[0] != "LAUNCH" || !read_triple(fields[2], launch.grid) ||
      !read_triple(fields[3], launch.block) || !read_count(fields[4], buffers) || !read_count(fields[5], scalars))
    return false;
  if (fields.size() > 6 && !schedule_named(fields[6], launch.schedule)) return false;
  if (fields.size() > 7 && fields[7] != "0" && fields[7] != "1") return false;
  launch.races = fields.size() < 8 || fields[7] == "1";
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

// The module parsed in `context`, or null with `error` set to the parser's diagnostic.
std::unique_ptr<llvm::Module> parse_module(const std::string& text, const std::string& name, llvm::LLVMContext& context,
                                           std::string& error) {
  llvm::SMDiagnostic parse_error;
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(text, name);
  std::unique_ptr<llvm::Module> module = llvm::parseAssembly(buffer->getMemBufferRef(), parse_error, context);
  if (!module) {
    std::string diagnostic;
    llvm::raw_string_ostream stream(diagnostic);
    parse_error.print(nullptr, stream, false);
    error = "parse error: " + stream.str();
  }
  return module;
}

std::string layout_dir() {
  const char* dir = std::getenv("KEMIT_MMA_LAYOUT_DIR");
  return dir && *dir ? dir : KEMIT_MMA_LAYOUT_DIR;
}

// The modules EXEC parsed last, each with the kernels decoded from it. The numerics lane sends one
// module text several times in a row (each input set, each chunk of its launch plan, each
// schedule); the same name and the same bytes parse to the same module, so the parse and the
// decoding are done once. A text that does not parse is not kept (its next request parses again).
class KernelCache {
 public:
  // The kernel of the module `text` (named `name`), parsed and decoded on first use; null with
  // `error` set when it cannot run. `seconds`: decoding time spent now (0 when reused).
  KernelPtr find(const std::string& name, const std::string& text, const std::string& kernel, std::string& error,
                 double& seconds) {
    seconds = 0.0;
    Entry* entry = entry_of(name, text, error);
    if (!entry) return nullptr;
    // "" is the first kernel: one decoding serves a launch that names it and one that does not.
    std::string chosen = kernel;
    if (chosen.empty())
      if (std::vector<std::string> names = kernel_names(*entry->module); !names.empty()) chosen = names.front();
    auto found = entry->kernels.find(chosen);
    if (found != entry->kernels.end()) return found->second;
    KernelPtr prepared = prepare_kernel(*entry->module, chosen, layout_dir(), error, seconds);
    if (prepared) entry->kernels.emplace(chosen, prepared);  // a refusal is decoded again, as it is rare
    return prepared;
  }

  // The SHA-256 (hex) of every kernel's name and fingerprint, in the module's order; "" with
  // `error` set when the text does not parse or a kernel cannot run.
  std::string digest(const std::string& name, const std::string& text, std::string& error) {
    Entry* entry = entry_of(name, text, error);
    if (!entry) return "";
    std::vector<std::string> names = kernel_names(*entry->module);
    if (names.empty()) return error = "the module defines no amdgpu_kernel", "";
    llvm::SHA256 hash;
    for (const std::string& kernel : names) {
      double seconds = 0.0;
      KernelPtr prepared = find(name, text, kernel, error, seconds);
      if (!prepared) return "";
      for (const std::string& part : {kernel, fingerprint(*prepared)}) {
        const uint64_t size = part.size();
        hash.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(&size), sizeof size));
        hash.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(part.data()), part.size()));
      }
    }
    return llvm::toHex(hash.final(), /*LowerCase=*/true);
  }

 private:
  struct Entry {
    std::string name, text;
    std::unique_ptr<llvm::LLVMContext> context;
    std::unique_ptr<llvm::Module> module;
    std::map<std::string, KernelPtr> kernels;
  };
  static constexpr size_t kModules = 4;  // a section's requests come one after another

  Entry* entry_of(const std::string& name, const std::string& text, std::string& error) {
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].name != name || entries_[i].text != text) continue;
      std::rotate(entries_.begin(), entries_.begin() + long(i), entries_.begin() + long(i) + 1);  // most recent first
      return &entries_.front();
    }
    Entry fresh{name, text, std::make_unique<llvm::LLVMContext>(), nullptr, {}};
    fresh.module = parse_module(text, name, *fresh.context, error);
    if (!fresh.module) return nullptr;
    if (entries_.size() == kModules) entries_.pop_back();
    entries_.insert(entries_.begin(), std::move(fresh));
    return &entries_.front();
  }

  std::vector<Entry> entries_;
};

KernelCache& kernels() {
  static KernelCache cache;
  return cache;
}

// ---- WITNESS: the launch description as JSON (the dict of kemit_cpp.witness) --------------

bool json_dims(const llvm::json::Value* value, witness::Dims& out) {
  out = {1, 1, 1};
  if (!value) return true;
  if (auto single = value->getAsInteger()) return *single >= 0 && (out[0] = uint64_t(*single), true);
  const llvm::json::Array* items = value->getAsArray();
  if (!items || items->empty() || items->size() > 3) return false;
  for (size_t i = 0; i < items->size(); ++i) {
    auto size = (*items)[i].getAsInteger();
    if (!size || *size < 0) return false;
    out[i] = uint64_t(*size);
  }
  return true;
}

bool json_count(const llvm::json::Object& object, const char* key, uint64_t& out) {
  const llvm::json::Value* value = object.get(key);
  if (!value) return true;
  auto number = value->getAsInteger();
  return number && *number >= 0 && (out = uint64_t(*number), true);
}

// A pointer param's binding {"buffer", "offset", "bytes"}; the rest of the buffer by default.
bool json_view(const std::string& param, const llvm::json::Object& binding, witness::Launch& launch, std::string& error) {
  witness::ViewSpec view;
  for (const auto& entry : binding) {
    std::string key = entry.first.str();
    if (key != "buffer" && key != "offset" && key != "bytes")
      return error = "witness launch: args['" + param + "'] has key '" + key + "' (buffer, offset, bytes)", false;
  }
  auto buffer = binding.getString("buffer");
  if (!buffer || !json_count(binding, "offset", view.offset)) return error = "witness launch: args['" + param + "'] is malformed", false;
  view.buffer = buffer->str();
  bool whole = !binding.get("bytes");
  if (!json_count(binding, "bytes", view.bytes)) return error = "witness launch: args['" + param + "'] is malformed", false;
  for (const auto& each : launch.buffers)
    if (whole && each.name == view.buffer && each.bytes >= view.offset) view.bytes = each.bytes - view.offset;
  launch.views[param] = view;
  return true;
}

bool json_launch(const std::string& line, witness::Launch& launch, std::string& error) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(line);
  if (!parsed) return error = "witness launch: " + llvm::toString(parsed.takeError()), false;
  const llvm::json::Object* top = parsed->getAsObject();
  if (!top) return error = "witness launch: not a JSON object", false;
  static const char* keys[] = {"kernel", "grid", "block", "seed", "page_bytes", "buffers", "args", "workgroups"};
  for (const auto& entry : *top) {
    bool known = false;
    for (const char* key : keys) known = known || entry.first.str() == key;
    if (!known) return error = "witness launch: unknown key '" + entry.first.str() + "'", false;
  }
  if (auto kernel = top->getString("kernel")) launch.kernel = kernel->str();
  if (!json_dims(top->get("grid"), launch.grid) || !json_dims(top->get("block"), launch.block) ||
      !json_count(*top, "seed", launch.seed) || !json_count(*top, "page_bytes", launch.page_bytes))
    return error = "witness launch: grid, block, seed or page_bytes is malformed", false;
  if (const llvm::json::Object* buffers = top->getObject("buffers"))
    for (const auto& entry : *buffers) {
      const llvm::json::Object* spec = entry.second.getAsObject();
      witness::BufferSpec buffer{entry.first.str(), 0, "f32"};
      if (!spec || !spec->get("bytes") || !json_count(*spec, "bytes", buffer.bytes))
        return error = "witness launch: buffers['" + buffer.name + "'] needs its bytes", false;
      if (auto fill = spec->getString("fill")) buffer.fill = fill->str();
      launch.buffers.push_back(buffer);
    }
  if (const llvm::json::Object* args = top->getObject("args"))
    for (const auto& entry : *args) {
      std::string param = entry.first.str();
      if (const llvm::json::Object* binding = entry.second.getAsObject()) {
        if (!json_view(param, *binding, launch, error)) return false;
      } else if (auto value = entry.second.getAsInteger()) {
        launch.scalars[param] = *value;
      } else {
        return error = "witness launch: args['" + param + "'] is neither a view nor an integer", false;
      }
    }
  if (const llvm::json::Array* groups = top->getArray("workgroups"))
    for (const llvm::json::Value& group : *groups) {
      witness::Dims dims;
      if (!json_dims(&group, dims)) return error = "witness launch: a workgroup is malformed", false;
      launch.workgroups.push_back(dims);
    }
  return true;
}

llvm::json::Object json_run(const witness::WorkgroupRun& run) {
  llvm::json::Object out{{"workgroup", llvm::json::Array{int64_t(run.workgroup[0]), int64_t(run.workgroup[1]), int64_t(run.workgroup[2])}},
                         {"ok", run.ok}};
  if (!run.ok) {
    out["op"] = run.op;
    out["workitem"] = run.workitem;
    out["message"] = run.message;
    out["error"] = run.error;
  }
  return out;
}

bool page_written(const witness::PagedBuffer::Page& page) {
  for (uint64_t word : page.written)
    if (word) return true;
  return false;
}

// The report's JSON (as kemit_cpp.witness's dict) and, after it, the written pages' bytes.
void write_witness_report(const std::string& name, const WitnessOutcome& result, const witness::Launch& launch,
                          const std::vector<witness::PagedBuffer>& buffers) {
  llvm::json::Array runs;
  for (const auto& run : result.runs) runs.push_back(json_run(run));
  llvm::json::Object per_buffer;
  for (const auto& buffer : buffers) {
    llvm::json::Array written;
    for (const auto& [index, page] : buffer.pages())
      if (page_written(page)) written.push_back(int64_t(index));
    per_buffer[buffer.name()] = llvm::json::Object{{"pages", int64_t(buffer.pages().size())}, {"written", std::move(written)}};
  }
  const Outcome& outcome = result.outcome;
  llvm::json::Value report = llvm::json::Object{{"runs", std::move(runs)},
                                                {"page_bytes", int64_t(launch.page_bytes)},
                                                {"buffers", std::move(per_buffer)},
                                                {"lane_instructions", int64_t(outcome.lane_instructions)},
                                                {"wave_instructions", int64_t(outcome.wave_instructions)},
                                                {"workgroups", int64_t(outcome.workgroups)},
                                                {"seconds", outcome.seconds}};
  std::string text;
  llvm::raw_string_ostream stream(text);
  stream << report;
  stream.flush();
  write("WITNESSED\t" + escape(name) + "\t1\t" + std::to_string(text.size()) + "\t\n" + text);
  // The pages follow the report's buffers in the order its JSON lists them, by name (llvm::json
  // prints an object's keys sorted): the launch's buffers come from a JSON object too, whose
  // order is its hash table's, and a reader takes the pages in the report's order.
  std::vector<const witness::PagedBuffer*> by_name;
  for (const auto& buffer : buffers) by_name.push_back(&buffer);
  std::sort(by_name.begin(), by_name.end(), [](const auto* a, const auto* b) { return a->name() < b->name(); });
  for (const witness::PagedBuffer* buffer_of : by_name)
    for (const auto& [index, page] : buffer_of->pages())
      if (page_written(page)) {
        std::fwrite(page.bytes.get(), 1, buffer_of->page_bytes(), stdout);
        std::fwrite(page.written.data(), sizeof(uint64_t), page.written.size(), stdout);
      }
}

// The module of a request: its header line (`VERB\t<bytes>\t<name>`) and the IR bytes after it.
bool read_module(const std::string& header, std::istream& in, std::string& name, std::string& text) {
  std::vector<std::string> fields = split_tabs(header);
  size_t ir_bytes = 0;
  if (fields.size() != 3 || !read_count(fields[1], ir_bytes) || !read_bytes(in, ir_bytes, text)) return false;
  name = fields[2];
  return true;
}

}  // namespace

bool serve_witness_request(const std::string& header, std::istream& in) {
  std::string name, text, line;
  if (!read_module(header, in, name, text) || !std::getline(in, line)) return false;
  witness::Launch launch;
  std::string error;
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module;
  if (json_launch(line, launch, error)) module = parse_module(text, name, context, error);
  WitnessOutcome result;
  std::vector<witness::PagedBuffer> buffers;
  if (module) {
    buffers.reserve(launch.buffers.size());  // the views point at them
    for (const auto& spec : launch.buffers) {
      witness::Fill fill = witness::Fill::f32;
      witness::fill_of(spec.fill, fill);  // check_launch refuses an unknown fill
      buffers.emplace_back(spec.name, spec.bytes, fill, launch.seed, launch.page_bytes);
    }
    result = execute_witness(*module, launch, buffers, layout_dir());
    error = result.outcome.error;
  }
  if (!error.empty()) write("WITNESSED\t" + escape(name) + "\t0\t0\t" + escape(error) + "\n");
  else write_witness_report(name, result, launch, buffers);
  std::fflush(stdout);
  return true;
}

bool serve_digest_request(const std::string& header, std::istream& in) {
  std::string name, text, error;
  if (!read_module(header, in, name, text)) return false;
  std::string digest = kernels().digest(name, text, error);
  write("DIGESTED\t" + escape(name) + "\t" + (digest.empty() ? "0" : "1") + "\t" + digest + "\t" + escape(error) + "\n");
  std::fflush(stdout);
  return true;
}

bool serve_exec_request(const std::string& header, std::istream& in) {
  std::string name, text;
  if (!read_module(header, in, name, text)) return false;
  Launch launch;
  if (!read_launch(in, launch)) return false;
  Outcome outcome;
  double decoding = 0.0;
  KernelPtr kernel = kernels().find(name, text, launch.kernel, outcome.error, decoding);
  if (kernel) {
    outcome = execute(*kernel, launch);
    outcome.seconds += decoding;
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
