// What a run produced (from the maillog and the queue), checks against the
// scenario's expectations, and the comparison of two runs.
#pragma once

#include "instance.hpp"
#include "scenario.hpp"

#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace compat {

// A multiset of strings: value -> multiplicity.
using Multiset = std::map<std::string, int>;

// Rewrites run-specific text so that two runs can be compared: the instance
// directory -> ${dir}, ports -> ${smtpd}/${sink.NAME}, queue IDs -> ID,
// size=123 -> size=N, and delay=/delays= fields removed.
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
    std::vector<std::string> problems; // fatal/panic lines and daemon crashes (raw)
    std::size_t log_lines = 0;
    double injection_seconds = 0; // time spent injecting
    double outcome_seconds = -1;  // first injection -> outcome reached (-1: not reached)
};

// Builds the outcome from all maillog lines and the final queue counts.
Outcome collect_outcome(const std::vector<std::string>& maillog_lines, const Vars& vars,
                        const std::vector<std::string>& sink_names, QueueCounts queue);

// True if a raw log line reports a Postfix fatal error, panic, or daemon crash.
bool is_problem_line(const std::string& program, const std::string& text);

// Returns one "expected X, found Y" message per unmet expectation.
std::vector<std::string> check_expectations(const Expect& expect, const Outcome& outcome,
                                            const Vars& vars);

// Returns one message per difference between two runs' outcomes.
std::vector<std::string> compare_outcomes(const Outcome& a, const std::string& a_name,
                                          const Outcome& b, const std::string& b_name,
                                          bool ignore_qmgr_warnings);

// Prints the readable per-run summary.
void print_outcome(std::ostream& out, const Outcome& o, bool verbose);

} // namespace compat
