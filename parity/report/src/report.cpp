#include "kemit/report/report.h"

#include <algorithm>

namespace kemit::report {

const char* status_name(Status status) {
  switch (status) {
    case Status::green: return "GREEN";
    case Status::not_applicable: return "N/A";
    case Status::partial: return "PARTIAL";
    case Status::red: return "RED";
  }
  return "RED";
}

Evidence& Evidence::operator+=(const Evidence& other) {
  passed += other.passed;
  failed += other.failed;
  not_applicable += other.not_applicable;
  unexplained += other.unexplained;
  blocking += other.blocking;
  return *this;
}

Status row_status(const Evidence& e, bool sharded) {
  if (e.failed > 0 || e.blocking > 0) return Status::red;
  if (e.passed > 0) return Status::green;
  if (e.not_applicable > 0 && e.unexplained == 0) return Status::not_applicable;
  return sharded ? Status::partial : Status::red;
}

std::string case_name(const Case& c) {
  return c.family + (c.id ? ":" + std::to_string(*c.id) : std::string()) + "@" + c.section;
}

bool Report::green() const {
  if (!run_failures.empty()) return false;
  if (std::any_of(rows.begin(), rows.end(), [](const Row& row) { return row.status == Status::red; })) return false;
  // A failed case is a failure whatever the rows say (a report whose rows were edited).
  if (std::any_of(cases.begin(), cases.end(), [](const Case& c) { return c.outcome == Outcome::failed; })) return false;
  // A whole run passes only when something passed; a shard only says that nothing failed in it.
  return run.shard || std::any_of(rows.begin(), rows.end(), [](const Row& row) { return row.status == Status::green; });
}

std::string default_note(const Row& row) {
  const Evidence& e = row.evidence;
  switch (row.status) {
    case Status::green: return "";
    case Status::not_applicable: return "every config is not applicable here";
    case Status::partial: return "nothing decided in this shard: the merged report judges the family";
    case Status::red: break;
  }
  if (e.failed > 0) return std::to_string(e.failed) + " config(s) failed";
  if (e.blocking > 0) return "the family itself failed";
  return "nothing was checked: no config passed or failed here";
}

void judge_rows(Report& report) {
  for (Row& row : report.rows) {
    row.status = row_status(row.evidence, report.run.shard.has_value());
    if (row.status == Status::green) row.note.clear();
    else if (row.note.empty() || (row.status == Status::red && row.evidence.failed > 0)) row.note = default_note(row);
  }
}

std::string failure_message(const std::string& verdict, const std::string& detail) {
  // The first line that is more than a heading ("first difference at line 7, column 3:" is a
  // heading; the differing lines follow it) - and the heading with its first two lines.
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= detail.size() && lines.size() < 3) {
    size_t end = detail.find('\n', start);
    std::string line = detail.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!line.empty()) {
      lines.push_back(line);
      if (lines.size() == 1 && line.back() != ':') break;
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  std::string text;
  for (const auto& line : lines) {
    size_t first = line.find_first_not_of(' ');
    text += (text.empty() ? "" : " ") + line.substr(first == std::string::npos ? line.size() : first);
  }
  constexpr size_t kMaxMessage = 400;
  if (text.size() > kMaxMessage) text = text.substr(0, kMaxMessage) + "...";
  return text.empty() ? verdict : verdict + ": " + text;
}

}  // namespace kemit::report
