// The JSON envelope of a report, both ways (merge reads what the lanes write).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <unistd.h>

#include "kemit/input_limits.h"
#include "kemit/report/render.h"

namespace kemit::report {
namespace {

using nlohmann::json;

const char* outcome_name(Outcome outcome) {
  return outcome == Outcome::passed ? "passed" : outcome == Outcome::failed ? "failed" : "skipped";
}

Outcome outcome_from(const std::string& name) {
  if (name == "passed") return Outcome::passed;
  if (name == "failed") return Outcome::failed;
  if (name == "skipped") return Outcome::skipped;
  throw std::invalid_argument("case outcome '" + name + "' is not passed, failed or skipped");
}

Status status_from(const std::string& name) {
  for (Status s : {Status::green, Status::not_applicable, Status::partial, Status::red})
    if (name == status_name(s)) return s;
  throw std::invalid_argument("row status '" + name + "' is not GREEN, N/A, PARTIAL or RED");
}

json evidence_json(const Evidence& e) {
  return {{"passed", e.passed}, {"failed", e.failed}, {"not_applicable", e.not_applicable},
          {"unexplained", e.unexplained}, {"blocking", e.blocking}};
}

Evidence evidence_from(const json& j) {
  return {j.at("passed").get<long>(), j.at("failed").get<long>(), j.at("not_applicable").get<long>(),
          j.at("unexplained").get<long>(), j.at("blocking").get<long>()};
}

json case_json(const Case& c) {
  json out = {{"name", case_name(c)}, {"family", c.family}, {"id", c.id ? json(*c.id) : json(nullptr)},
              {"section", c.section}, {"verdict", c.verdict}, {"outcome", outcome_name(c.outcome)},
              {"seconds", c.seconds}};
  if (!c.message.empty()) out["message"] = c.message;
  if (!c.detail.empty()) out["detail"] = c.detail;
  return out;
}

Case case_from(const json& j) {
  Case c;
  c.family = j.at("family").get<std::string>();
  if (!j.at("id").is_null()) c.id = j.at("id").get<std::int64_t>();
  c.section = j.at("section").get<std::string>();
  c.verdict = j.at("verdict").get<std::string>();
  c.outcome = outcome_from(j.at("outcome").get<std::string>());
  c.message = j.value("message", "");
  c.detail = j.value("detail", "");
  c.seconds = j.at("seconds").get<double>();
  return c;
}

}  // namespace

json envelope_json(const Report& report) {
  json rows = json::array(), cases = json::array();
  for (const auto& row : report.rows)
    rows.push_back({{"family", row.family}, {"section", row.section}, {"status", status_name(row.status)},
                    {"evidence", evidence_json(row.evidence)}, {"note", row.note}});
  for (const auto& c : report.cases) cases.push_back(case_json(c));
  const RunInfo& run = report.run;
  json shard = run.shard ? json{{"index", run.shard->index}, {"count", run.shard->count}} : json(nullptr);
  return {{"format", kFormat},
          {"tool", run.tool},
          {"tool_version", run.tool_version},
          {"commit", run.commit},
          {"started", run.started},
          {"duration_seconds", run.duration_seconds},
          {"repro", run.repro},
          {"run_key", run.run_key},
          {"shard", shard},
          {"lane", report.lane},
          {"summary",
           {{"result", report.green() ? "GREEN" : "RED"}, {"rows", rows}, {"cases", cases},
            {"run_failures", report.run_failures}}}};
}

Report report_from_json(const json& document) {
  if (!document.is_object() || document.value("format", "") != kFormat)
    throw std::invalid_argument(std::string("not a kemit report of format ") + kFormat +
                                " (write it with --json from a tool of this version)");
  try {
    Report report;
    RunInfo& run = report.run;
    run.tool = document.at("tool").get<std::string>();
    run.tool_version = document.at("tool_version").get<std::string>();
    run.commit = document.at("commit").get<std::string>();
    run.started = document.at("started").get<std::string>();
    run.duration_seconds = document.at("duration_seconds").get<double>();
    run.repro = document.at("repro").get<std::vector<std::string>>();
    run.run_key = document.at("run_key").get<std::string>();
    if (!document.at("shard").is_null())
      run.shard = Shard{document["shard"].at("index").get<int>(), document["shard"].at("count").get<int>()};
    report.lane = document.at("lane").get<std::string>();
    const json& summary = document.at("summary");
    for (const auto& r : summary.at("rows"))
      report.rows.push_back({r.at("family").get<std::string>(), r.at("section").get<std::string>(),
                             evidence_from(r.at("evidence")), status_from(r.at("status").get<std::string>()),
                             r.at("note").get<std::string>()});
    for (const auto& c : summary.at("cases")) report.cases.push_back(case_from(c));
    report.run_failures = summary.at("run_failures").get<std::vector<std::string>>();
    return report;
  } catch (const json::exception& error) {
    throw std::invalid_argument(std::string("malformed report: ") + error.what());
  }
}

void write_text_file(const std::string& path, const std::string& content) {
  std::string temporary = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw std::runtime_error("cannot write " + path + " (check that its folder exists and is writable)");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw std::runtime_error("cannot replace " + path + " (check its folder's permissions)");
  }
}

namespace {

// The folders a report never goes into, by name: any checkout's golden store and configs.
bool is_store_folder(const std::filesystem::path& folder) {
  std::string name = folder.filename().string(), parent = folder.parent_path().filename().string();
  return (parent == "golden" && name == "shards") || (parent == "parity" && name == "configs");
}

bool is_under(const std::filesystem::path& path, const std::filesystem::path& folder) {
  auto p = path.begin(), f = folder.begin();
  for (; f != folder.end(); ++f, ++p)
    if (p == path.end() || *p != *f) return false;
  return p != path.end();
}

}  // namespace

std::string report_target_problem(const std::string& flag, const std::string& path,
                                  const std::vector<std::string>& stores) {
  namespace fs = std::filesystem;
  std::error_code error;
  // Resolved as the write will resolve it: `..` and symlinked folders cannot hide a store.
  fs::path target = fs::weakly_canonical(fs::absolute(path, error), error);
  if (error) target = fs::absolute(path, error).lexically_normal();
  auto refuse = [&](const std::string& store) {
    return flag + " " + path + ": a report may not be written into " + store +
           " (kemit's golden shards and parity configs are written only by their own commands); name a file "
           "outside golden/shards/ and parity/configs/";
  };
  for (const auto& store : stores) {
    if (store.empty()) continue;
    fs::path folder = fs::weakly_canonical(fs::absolute(store, error), error);
    if (!error && is_under(target, folder)) return refuse(store + "/");
  }
  for (fs::path folder = target.parent_path(); !folder.empty() && folder != folder.root_path();
       folder = folder.parent_path())
    if (is_store_folder(folder)) return refuse(folder.string() + "/");
  std::string unsafe = limits::unsafe_write_target(path);
  if (!unsafe.empty()) return flag + " " + path + ": cannot write the report: it " + unsafe;
  return "";
}

std::string report_targets_problem(const std::vector<std::pair<std::string, std::string>>& flag_paths,
                                   const std::vector<std::string>& stores) {
  for (const auto& [flag, path] : flag_paths) {
    if (path.empty()) continue;
    std::string problem = report_target_problem(flag, path, stores);
    if (!problem.empty()) return problem;
  }
  return "";
}

void write_report_file(const std::string& path, const std::string& content) {
  std::string problem = report_target_problem("report", path);
  if (!problem.empty()) throw std::runtime_error(problem);
  write_text_file(path, content);
}

void make_text_safe(json& document) {
  if (document.is_string()) {
    std::string& text = document.get_ref<std::string&>();
    if (!limits::is_valid_utf8(text)) text = limits::cut_text(text, limits::kNoCut);
  } else if (document.is_array()) {
    for (auto& item : document) make_text_safe(item);
  } else if (document.is_object()) {
    bool keys_safe = true;
    for (auto& [key, value] : document.items()) {
      keys_safe = keys_safe && limits::is_valid_utf8(key);
      make_text_safe(value);
    }
    if (keys_safe) return;
    json rebuilt = json::object();
    for (auto& [key, value] : document.items()) rebuilt[limits::cut_text(key, limits::kNoCut)] = std::move(value);
    document = std::move(rebuilt);
  }
}

void write_json_report(const std::string& path, json lane_json, const Report& report) {
  if (!lane_json.is_object()) lane_json = json::object();
  json envelope = envelope_json(report);
  for (auto& [key, value] : envelope.items()) lane_json[key] = std::move(value);  // a case per config and section
  make_text_safe(lane_json);
  write_report_file(path, lane_json.dump(1) + "\n");
}

}  // namespace kemit::report
