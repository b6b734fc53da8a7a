// Sanitizer reports of a cqmgr built with AddressSanitizer and
// UndefinedBehaviorSanitizer: a wrapper that sends the daemon's reports to
// files in the instance, and the check that turns any such file into a
// failure of the run.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace compat {

// The report directory, relative to the queue directory. master(8) runs its
// children in the queue directory, and cqmgr stays there (also when it
// chroots there), so a relative path reaches it from every process.
const char* sanitizer_report_dir();

// The script that stands in for cqmgr in daemon_directory: it sends stderr,
// where the sanitizers report, to <report dir>/cqmgr.PID, sets their options
// and execs `cqmgr_path` under the name cqmgr (same pid, same argv).
// `leak_check` is false for a chrooted cqmgr: LeakSanitizer reads
// /proc/PID/task at exit, and the queue directory has no /proc, so it would
// report its own fatal error instead of leaks.
std::string sanitizer_wrapper(const std::string& cqmgr_path, bool leak_check = true);

// `text` without cqmgr's own log lines ("NAME/qmgr[PID]: ..." or
// "NAME/qmgr: ..."): when postlogd has already gone at teardown, cqmgr's
// last log lines fall back to stderr, which is the report file here, and
// they are no finding.
std::string without_log_lines(const std::string& text);

// One failure per report file in `dir` with anything in it but cqmgr's own
// log lines: the file name and its text (the first `max_lines` lines of it).
std::vector<std::string> sanitizer_reports(const std::string& dir, std::size_t max_lines = 120);

} // namespace compat
