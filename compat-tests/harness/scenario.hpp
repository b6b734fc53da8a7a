// Scenario files (TOML): what to set up, what to inject, what to expect.
// Strings may use ${dir}, ${conf}, ${queue}, ${smtpd},
// ${sink.NAME} (port) and ${sinkdir.NAME} (a directory owned by postfix for
// smtp-sink dumps); they are expanded per run
// (see Vars), because ports and directories differ between runs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace compat {

// One smtp-sink process.
struct SinkSpec {
    std::string name;
    std::vector<std::string> args; // extra smtp-sink arguments (before address and backlog)
    int backlog = 100;
    bool start = true; // false: the sink starts down (an action brings it up)
    bool dump = false; // capture every transaction (smtp-sink -d) for comparison
    // Count the sessions open at once exactly (SessionCounter): the sink's
    // port is the counter's, which relays to smtp-sink on a port of its own.
    bool count_sessions = false;
    std::string host = "127.0.0.1"; // listen address (0.0.0.0 only in a private network namespace)
};

// One injection step; which fields apply depends on `method`.
struct InjectSpec {
    std::string method; // "smtp-source", "smtp" or "sendmail"
    std::string from = "sender@example.org";
    std::vector<std::string> to; // smtp-source: exactly one (its -t)
    // smtp-source
    int messages = 1;        // -m
    int sessions = 1;        // -s
    int recipients = 1;      // -r (recipient names get a number prefix: bob, 2bob, 3bob)
    std::optional<int> size; // -l
    // smtp / sendmail
    std::optional<std::string> subject; // default: none for smtp-source, "compat test" otherwise
    std::string body = "compat test message\n";
    int count = 1;                    // repeat the message this many times
    std::vector<std::string> headers; // extra header lines
    // smtp only: ESMTP parameters appended to MAIL FROM / every RCPT TO
    std::string mail_params; // e.g. "XVERP" or "RET=HDRS ENVID=x"
    std::string rcpt_params; // e.g. "NOTIFY=SUCCESS"
    // all methods
    std::vector<std::string> args; // extra command-line arguments (smtp-source, sendmail)
    double delay_before = 0;       // seconds to sleep before this step
    int peer = 0;                  // into [peers] instance K (1..count); 0: the run's own
};

// [peers]: more sending instances beside the run's own (see peers.hpp).
struct PeersSpec {
    int count = 0;
    std::optional<int> sent;  // status=sent lines each peer must log
    bool queue_empty = false; // every message queue directory of each peer empty at the end
};

// What a wait_for step waits for (all bounded by the scenario timeout).
struct WaitSpec {
    enum class Kind { Log, Queue, Connections, Unlocked };
    Kind kind = Kind::Log;
    std::string log;               // Log: ECMAScript regex matched against whole maillog lines
    int count = 1;                 // Log: at least this many matching lines
    std::string queue;             // Queue, Unlocked: a queue directory name
    int files = 0;                 // Queue: exactly this many files
    std::string sink;              // Connections: a sink name
    int connections = 1;           // Connections: at least this many established connections
    std::optional<double> timeout; // seconds; default: until the scenario deadline
};

// One [[action]] step. It runs after the first `after_inject` injections
// (default: all), after `delay_before` seconds and, if given, after its
// `wait_for` condition holds; then it does its one `kind` of thing (or
// nothing, for a pure wait).
struct ActionSpec {
    std::string where;     // "action[N]" for messages
    int after_inject = -1; // resolved by the parser: 0..number of injections
    double delay_before = 0;
    std::optional<WaitSpec> wait_for;
    std::string kind; // "" (wait only), command, sleep, trigger, kill_qmgr, kill_process,
                      // corrupt_file, stop_service, start_service, start_sink, stop_sink,
                      // fill_fs, free_fs
    std::vector<std::string> command; // command
    bool allow_failure = false;       // command: a non-zero exit is not an error
    double sleep = 0;                 // sleep
    std::string signal = "KILL";      // kill_qmgr, kill_process
    std::string process;              // kill_process: argv[0] of master's child
    std::string connected_to;         // kill_process: only those connected to this sink
    std::string service;              // stop_service, start_service: master.cf service name
    std::string sink;                 // start_sink, stop_sink
    std::string trigger;              // trigger: bytes written to public/qmgr (e.g. "D", "AD")
    // corrupt_file: take the first file of `from`, damage it, move it to `to`
    std::string from_queue = "hold";
    std::string to_queue = "incoming";
    std::string how = "truncate"; // truncate, bad_record, no_sender
    // "stock" or "cqmgr": run the action only in that queue manager's run
    // (e.g. a check of cqmgr's own metrics); "" = in both.
    std::string qmgr;
};

// A numeric range; either bound may be absent.
struct Range {
    std::optional<double> min;
    std::optional<double> max;
    bool contains(double v) const { return (!min || v >= *min) && (!max || v <= *max); }
    std::string describe() const;
};

// Gaps between successive mail transactions captured by dump sinks (pooled
// over `sinks`, ordered by the time each transaction's dump file was
// written): every gap must lie in [min, max] seconds.
struct SpacingExpect {
    std::vector<std::string> sinks; // names of [[sink]]s with dump = true
    Range gap;                      // seconds, each gap
};

// Files of hashed queue directories: each must sit in the subdirectory
// that Postfix derives from its queue ID (hash_queue_depth levels).
struct HashedExpect {
    int depth = 1;
    std::vector<std::string> queues; // e.g. deferred, defer, incoming
};

// Number of maillog lines matching a regex.
struct LogExpect {
    std::string match;        // ECMAScript regex, ${...} expanded per run
    std::optional<int> count; // exactly
    std::optional<int> min;   // at least
    std::optional<int> max;   // at most
};

// Maillog order: every line matching `lines` comes before the last line
// matching `before_last`, and both occur (e.g. small mail is not delivered
// last).
struct OrderExpect {
    std::string lines;       // ECMAScript regex, ${...} expanded per run
    std::string before_last; // likewise
};

struct MailboxExpect {
    std::string path;
    std::vector<std::string> contains;
    std::optional<int> messages; // number of "From " separator lines (mbox)
};

struct Expect {
    std::optional<int> sent;
    std::optional<int> deferred;
    std::optional<int> bounced;
    std::optional<int> expired;
    std::optional<bool> queue_empty;
    std::map<std::string, int> per_sink;      // sink name -> status=sent lines relayed to it
    std::map<std::string, int> notifications; // e.g. "sender non-delivery notification" -> 1
    std::vector<MailboxExpect> mailbox;
    std::map<std::string, int> queue;              // queue dir -> exact file count at the end
    std::optional<Range> backoff;                  // seconds: mtime - ctime of every deferred file
    std::vector<LogExpect> log;                    // maillog lines matching a regex
    std::vector<OrderExpect> order;                // maillog lines before others
    std::map<std::string, Range> peak_connections; // sink -> most simultaneous connections seen
    std::map<std::string, Range> session_peak;     // counting sink -> most sessions at once
    // "SINK:DOMAIN" -> most sessions of that sender domain at once
    std::map<std::string, Range> sender_session_peak;
    std::optional<Range> deferral_rate;      // percent: status=deferred / (sent + deferred) lines
    std::map<std::string, int> transactions; // dump sink -> captured mail transactions
    std::map<std::string, int> flush_log;    // fast flush log (file name in queue/flush/,
                                             // e.g. dest_example) -> distinct queue IDs
    std::vector<SpacingExpect> spacing;      // gaps between captured transactions
    std::optional<Range> flow_tokens;        // in-flow tokens in master's flow pipe at the end
    std::optional<HashedExpect> hashed;      // hashed queue file placement
};

// A [[report]]: a command run once the outcome is reached, while the
// instance still runs (e.g. a log analyser over ${maillog}, or cqmgrctl).
// Its standard output, normalized as the maillog is (queue IDs, ports,
// ${dir}), is compared between the runs line by line as a multiset.
struct ReportSpec {
    std::string where;                // "report[N]" for messages
    std::string name;                 // [a-z0-9_-], names the output in diffs
    std::vector<std::string> command; // ${...} expanded per run
    std::string qmgr;                 // "stock" or "cqmgr": only that run; "" both
    bool show = false;                // print the output after the run's outcome
    bool compare = true;              // false: shown only, not compared
};

// A [[milestone]]: the time from the first injection to the `count`-th
// maillog line matching `match` (by the line's timestamp), shown next to
// the time to drain in the summary of both runs. Informational: no limit.
struct MilestoneSpec {
    std::string name;  // shown as is
    std::string match; // ECMAScript regex, ${...} expanded per run
    int count = 1;
};

// Where the queue directory lives.
struct QueueFsSpec {
    int size_mib = 0; // > 0: a loop-mounted ext4 image of this size (no root reserve)
};

// How two runs' qmgr log lines are compared.
enum class CompareMode { Multiset, Set, Ignore };

struct Scenario {
    std::string file;
    std::string name;
    std::string description;
    int timeout = 60;    // seconds per run to reach the outcome
    double settle = 1.0; // seconds the state must stay unchanged
    bool slow = false;   // informational: ctest label compat-slow
    // Only cqmgr runs (with --qmgr both): a scenario of cqmgr's own features,
    // with its own expectations and nothing of stock's to compare.
    bool cqmgr_only = false;
    CompareMode compare_qmgr_lines = CompareMode::Multiset;    // Ignore: not compared
    CompareMode compare_qmgr_warnings = CompareMode::Multiset; // ignore_qmgr_warnings = Ignore
    double backoff_tolerance = 2; // seconds between the runs' sorted deferred backoffs
    // Set: recipients are compared by their deferral rate (within this many
    // percentage points) instead of record by record, for scenarios where
    // which recipients are deferred depends on timing.
    std::optional<double> deferral_rate_tolerance;
    std::vector<std::pair<std::string, std::string>> main_cf; // appended to the base main.cf
    std::vector<std::string> master_cf;                       // extra master.cf lines
    std::string qmgr_service_type = "unix"; // master.cf type of the qmgr line: unix or fifo
    std::vector<std::string> qmgr_args;     // extra arguments on the qmgr line (both runs)
    std::vector<std::string> chroot;        // services run chrooted ("all": as Debian ships)
    QueueFsSpec queue_fs;                   // the queue on a file system of its own
    // Regexes for fatal/panic/crash lines that are part of the scenario
    // (e.g. stock qmgr exits on ENOSPC); any other such line is a failure.
    std::vector<std::string> allowed_problems;
    // A command run at teardown in every run, passed or failed (before the
    // instance stops): it ends what the scenario's commands started outside
    // the instance (a redis-server rewrites its environment, so teardown
    // cannot tell it by MAIL_CONFIG).
    std::vector<std::string> cleanup;
    std::vector<SinkSpec> sinks;
    PeersSpec peers;
    // Names of free loopback ports to allocate per run, as ${port.NAME}
    // (for a listener of the queue manager's own, e.g. its metrics).
    std::vector<std::string> ports;
    std::vector<InjectSpec> injects;
    std::vector<ActionSpec> actions;
    std::vector<ReportSpec> reports;
    std::vector<MilestoneSpec> milestones;
    Expect expect;
};

// The master.cf services that "all" chroots: those Debian's master.cf runs
// with chroot = y.
const std::vector<std::string>& chrootable_services();

// Reads and validates a scenario file; throws Error naming file, line and key.
Scenario load_scenario(const std::string& path);

// Parses scenario text; `source` is used in messages and as Scenario::file.
Scenario parse_scenario(std::string_view text, const std::string& source);

// Signal name or number -> number; throws Error naming `context` otherwise.
int signal_number(const std::string& name, const std::string& context);

// Per-run variables for ${...} expansion.
class Vars {
  public:
    void set(const std::string& name, const std::string& value) { values_[name] = value; }
    // Expands ${dir}, ${smtpd}, ${sink.NAME}, ${sinkdir.NAME} and
    // ${port.NAME}; any other ${...} (Postfix's own syntax, e.g.
    // ${recipient}) is left alone, but an unknown ${sink.*}, ${sinkdir.*}
    // or ${port.*} is an error.
    std::string expand(const std::string& text, const std::string& context) const;
    const std::map<std::string, std::string>& values() const { return values_; }

  private:
    std::map<std::string, std::string> values_;
};

} // namespace compat
