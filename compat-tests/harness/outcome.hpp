// What a run produced (from the maillog and the queue), checks against the
// scenario's expectations, and the comparison of two runs.
#pragma once

#include "instance.hpp"
#include "maillog.hpp"
#include "scenario.hpp"

#include <map>
#include <optional>
#include <ostream>
#include <regex>
#include <set>
#include <string>
#include <sys/types.h>
#include <vector>

namespace compat {

// A multiset of strings: value -> multiplicity.
using Multiset = std::map<std::string, int>;

// Rewrites run-specific text so that two runs can be compared: the instance
// directory -> ${dir}, ports -> ${smtpd}/${sink.NAME}, queue IDs -> ID,
// size=123 -> size=N, "at offset 652" -> "at offset N", and delay=/delays=
// fields removed.
class Normalizer {
  public:
    explicit Normalizer(const Vars& vars);
    void add_queue_id(const std::string& id) { ids_.insert({id, 0}); }
    std::string apply(const std::string& text) const;
    // Only the dir/port substitution (for relay fields).
    std::string unexpand(const std::string& text) const;

  private:
    std::string dir_;
    std::map<std::string, std::string> ports_; // "10025" -> "${sink.a}"
    std::map<std::string, int> ids_;
};

struct Outcome {
    bool collected = false;
    Multiset statuses;      // status word -> number of to=<> lines (plus "expired" from qmgr)
    Multiset recipients;    // "to=<x> orig_to=<y> status=S dsn=D relay=R" (normalized)
    Multiset per_sink;      // sink name -> status=sent lines relayed to it
    Multiset notifications; // "sender non-delivery notification" -> count
    QueueCounts queue;      // files left per queue directory
    Multiset qmgr_lines;    // normalized qmgr log templates, warnings excluded
    Multiset qmgr_warnings; // normalized qmgr "warning:" templates
    std::vector<std::string> problems;            // fatal/panic lines and daemon crashes (raw)
    std::vector<long> backoffs;                   // per deferred file: mtime - ctime (s), sorted
    std::map<std::string, Multiset> transactions; // dump sink -> envelope of each transaction
    std::map<std::string, int> peak_connections;  // sink -> most simultaneous connections
    // Counting sinks (SessionCounter): the most sessions open at once, the
    // sessions in all, and the wakeups that saw both an end and a new one.
    // Also each sender domain's peak (SessionCounter::sender_peaks).
    struct Sessions {
        int peak = 0;
        long total = 0;
        long mixed_wakeups = 0;
        std::map<std::string, int> senders;
    };
    std::map<std::string, Sessions> sessions;
    std::vector<std::string> peer_summary;  // one line per [peers] instance
    std::vector<std::string> maillog;       // raw lines, for expect.log
    std::vector<std::string> corrupt_files; // names of the files left in corrupt/
    Multiset flush_logs;                    // fast flush log file -> distinct queue IDs it lists
    std::map<std::string, std::vector<double>> transaction_times; // dump sink -> sorted times (s)
    long flow_tokens = -1; // bytes in master's in-flow pipe at the end (-1: not measured)
    std::map<std::string, std::vector<std::string>> queue_paths; // queue dir -> relative paths
    std::size_t log_lines = 0;
    double injection_seconds = 0; // time spent injecting
    double outcome_seconds = -1;  // first injection -> outcome reached (-1: not reached)
    // [[report]] name -> its output lines, normalized (compared between runs)
    std::map<std::string, Multiset> reports;
    // [[report]]s with show = true: name and raw output, in scenario order
    std::vector<std::pair<std::string, std::string>> shown_reports;
    // [[milestone]] name -> seconds after the first injection (-1: not reached), in order
    std::vector<std::pair<std::string, double>> milestones;
};

// Processes a scenario signalled on purpose, and problem lines it provokes.
struct ExpectedKills {
    std::set<pid_t> pids;            // "process ... pid N killed by signal S" is expected
    std::set<std::string> programs;  // "PATH/NAME: bad command startup" is expected (a process
                                     // killed before it finished a request)
    std::vector<std::regex> allowed; // fatal/panic/crash lines (raw) that are part of the test
};

// True if a master line about a dead child is explained by an expected kill.
bool is_expected_kill(const std::string& text, const ExpectedKills& killed);

// True if a problem line is an expected kill or matches an allowed regex.
bool is_expected_problem(const LogLine& l, const ExpectedKills& expected);

// True if a raw maillog line says master throttles a service that died at
// startup ("bad command startup") and the scenario did not cause it: the
// service then stays down for a minute, so waiting on is pointless.
bool is_startup_failure(const std::string& raw, const ExpectedKills& expected);

// Builds the outcome from all maillog lines and the final queue counts.
// master's lines about processes the scenario killed on purpose are not problems.
Outcome collect_outcome(const std::vector<std::string>& maillog_lines, const Vars& vars,
                        const std::vector<std::string>& sink_names, QueueCounts queue,
                        const ExpectedKills& killed = {});

// The normalizer for a run's report output: the run's variables and every
// queue ID its maillog names.
Normalizer maillog_normalizer(const std::vector<std::string>& maillog_lines, const Vars& vars);

// Splits report output into normalized lines (a multiset: how often each).
Multiset normalized_lines(const std::string& text, const Normalizer& norm);

// Seconds since the epoch of a maillog line's timestamp ("Nov 24 16:25:39"
// or with ".123456"), taken in this year and the local time zone as
// postlogd writes it; nullopt if the line has none.
std::optional<double> log_line_time(const std::string& raw);

// The time of each milestone: from `t0` (seconds since the epoch, the first
// injection) to the count-th maillog line that matches; -1 if there are
// fewer.
std::vector<std::pair<std::string, double>>
milestone_times(const std::vector<MilestoneSpec>& milestones,
                const std::vector<std::string>& maillog_lines, const Vars& vars, double t0);

// Prints the two runs' counts, times and milestones in two columns.
void print_side_by_side(std::ostream& out, const Outcome& a, const std::string& an,
                        const Outcome& b, const std::string& bn);

// The backoff of every file in deferred/ (recursively): mtime - ctime in whole
// seconds. qmgr sets the mtime (not-before time) and then renames the file
// into deferred/, which sets the ctime, so this is the retry delay it chose.
std::vector<long> deferred_backoffs(const std::string& deferred_dir);

// The fast flush logs below `flush_dir` (flush(8) keeps one file per site,
// named after the site with non-alphanumerics as '_'): file name -> number of
// distinct queue IDs in it.
Multiset flush_log_ids(const std::string& flush_dir);

// The times (seconds since the epoch, sub-second) at which an smtp-sink -d
// wrote each captured transaction in `dump_dir`, sorted.
std::vector<double> sink_transaction_times(const std::string& dump_dir);

// Successive differences of the pooled, sorted transaction times of `sinks`.
std::vector<double> transaction_gaps(const Outcome& o, const std::vector<std::string>& sinks);

// The hashed subdirectory ("A/B/") in which Postfix keeps queue ID `id` at
// hash_queue_depth `depth`.
std::string hashed_queue_subdir(const std::string& id, int depth);

// Paths of the regular files below a queue directory, relative to it ("A/B/ID"), sorted.
std::vector<std::string> queue_file_paths(const std::string& queue_dir);

// Names of the regular files below a directory (recursively), sorted.
std::vector<std::string> file_names_below(const std::string& dir);

// The envelopes of the transactions an smtp-sink -d captured in `dump_dir`:
// "MAIL <args> | RCPT <args>; <args>" (RCPT arguments sorted, SIZE=N masked).
Multiset sink_transactions(const std::string& dump_dir);

// How two outcomes are compared.
struct CompareOptions {
    CompareMode qmgr_lines = CompareMode::Multiset;
    CompareMode qmgr_warnings = CompareMode::Multiset;
    double backoff_tolerance = 2;                  // seconds
    std::optional<double> deferral_rate_tolerance; // set: compare rates, not recipient records
};

// Percentage of recipient lines that say status=deferred among those that
// say sent or deferred (-1 when there are none).
double deferral_rate(const Outcome& o);

// True if a raw log line reports a Postfix fatal error, panic, or daemon crash.
bool is_problem_line(const std::string& program, const std::string& text);

// Returns one "expected X, found Y" message per unmet expectation.
std::vector<std::string> check_expectations(const Expect& expect, const Outcome& outcome,
                                            const Vars& vars);

// Returns one message per difference between two runs' outcomes.
std::vector<std::string> compare_outcomes(const Outcome& a, const std::string& a_name,
                                          const Outcome& b, const std::string& b_name,
                                          const CompareOptions& opts);

// Prints the readable per-run summary.
void print_outcome(std::ostream& out, const Outcome& o, bool verbose);

} // namespace compat
