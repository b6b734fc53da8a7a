// [[action]] steps: commands, waits, signals to the queue manager and to
// delivery agents, damaged queue files, stopped services and sinks.
#pragma once

#include "instance.hpp"
#include "outcome.hpp"
#include "scenario.hpp"
#include "sink.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <sys/types.h>

namespace compat {

// Writes trigger bytes to a queue manager's service `path` (public/qmgr)
// in one write, with the NUL that unix_trigger clients send, and waits (up
// to 10 s) for the server to close; a fifo is written as fifo_trigger()
// does.  (postkick writes the NUL separately and may die of SIGPIPE when
// the server closes after the first write.)
void send_trigger(const std::string& path, const std::string& bytes);
// The fifo case of send_trigger().
void send_fifo_trigger(const std::string& path, const std::string& bytes);

// Resolves a bare program name in /usr/sbin, /usr/bin, /sbin or /bin (a
// path is kept); throws Error if there is none.
std::string find_program(const std::string& name);

// What an action may touch during one run.
struct ActionContext {
    Instance& inst;
    const Vars& vars;
    std::map<std::string, Sink*> sinks; // by name
    std::chrono::steady_clock::time_point deadline;
    bool verbose = false;
    // Processes the scenario killed on purpose: master's "killed by signal"
    // and "bad command startup" lines about them are not failures.
    ExpectedKills& killed;
};

// Runs one action to completion (bounded by ctx.deadline); throws Error on failure.
void run_action(const ActionSpec& action, std::size_t index, ActionContext& ctx);

// How long a [[report]] command may take, in seconds.
constexpr int kReportSeconds = 60;

// Runs a [[report]] command to completion (within kReportSeconds) and
// returns its output (standard output and error); throws Error when it
// fails or takes too long.
std::string run_report(const ReportSpec& report, const ActionContext& ctx);

// Checks a wait_for condition once; `state` describes what was found.
bool wait_condition_met(const WaitSpec& w, ActionContext& ctx, std::string& state);

// Damages the first (by name) queue file in `from_queue` as `how` says
// (truncate, bad_record, no_sender), leaves it owned by `owner` with mode 0700
// and renames it into `to_queue`. Returns the queue ID. Exposed for tests.
std::string corrupt_queue_file(const std::string& queue_dir, const std::string& from_queue,
                               const std::string& to_queue, const std::string& how, uid_t owner,
                               gid_t group);

// Applies a corruption to queue-file bytes in memory (exposed for tests).
// Returns the new content; throws Error if the file does not look like a queue file.
std::string corrupt_queue_bytes(const std::string& data, const std::string& how);

} // namespace compat
