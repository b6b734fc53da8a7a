// Scenario files (TOML): what to set up, what to inject, what to expect.
// Strings may use ${dir}, ${smtpd}, ${sink.NAME} (port) and ${sinkdir.NAME}
// (a directory owned by postfix for smtp-sink dumps); they are expanded per run
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
    // all methods
    std::vector<std::string> args; // extra command-line arguments (smtp-source, sendmail)
    double delay_before = 0;       // seconds to sleep before this step
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
};

struct Scenario {
    std::string file;
    std::string name;
    std::string description;
    int timeout = 60;    // seconds per run to reach the outcome
    double settle = 1.0; // seconds the state must stay unchanged
    bool ignore_qmgr_warnings = false;
    std::vector<std::pair<std::string, std::string>> main_cf; // appended to the base main.cf
    std::vector<std::string> master_cf;                       // extra master.cf lines
    std::vector<SinkSpec> sinks;
    std::vector<InjectSpec> injects;
    Expect expect;
};

// Reads and validates a scenario file; throws Error naming file, line and key.
Scenario load_scenario(const std::string& path);

// Parses scenario text; `source` is used in messages and as Scenario::file.
Scenario parse_scenario(std::string_view text, const std::string& source);

// Per-run variables for ${...} expansion.
class Vars {
  public:
    void set(const std::string& name, const std::string& value) { values_[name] = value; }
    // Expands ${dir}, ${smtpd}, ${sink.NAME} and ${sinkdir.NAME}; any other
    // ${...} (Postfix's own syntax, e.g. ${recipient}) is left alone, but an
    // unknown ${sink.*} or ${sinkdir.*} is an error.
    std::string expand(const std::string& text, const std::string& context) const;
    const std::map<std::string, std::string>& values() const { return values_; }

  private:
    std::map<std::string, std::string> values_;
};

} // namespace compat
