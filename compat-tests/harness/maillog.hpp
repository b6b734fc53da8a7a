// Parsing of the instance's maillog (written by postlogd(8)).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace compat {

// One log line split into its parts:
// "Nov 22 02:42:50 test postfix/smtp[4064]: 63904A7250F: to=<b@x>, ..."
struct LogLine {
    std::string program; // "postfix/smtp"
    std::string service; // "smtp" (last path component of program)
    long pid = 0;
    std::string queue_id; // "63904A7250F", or "" if the text has no queue ID prefix
    std::string text;     // the message after "ID: " (or after "prog[pid]: ")
    std::string raw;
};

// Splits a line; nullopt if it does not look like "... prog[pid]: text".
std::optional<LogLine> parse_log_line(std::string_view line);

// True for Postfix short (hex) or long (enable_long_queue_ids) queue IDs.
bool looks_like_queue_id(std::string_view s);

// A per-recipient delivery record: a "to=<...>" line.
struct Delivery {
    std::string to;
    std::string orig_to; // "" if absent
    std::string relay;
    std::string dsn;
    std::string status; // sent, deferred, bounced, expired, undeliverable, ...
    std::string delay;  // seconds from arrival to this record, as logged ("0.31"); "" if absent
};

// Parses "to=<a>, [orig_to=<b>,] relay=..., dsn=..., status=..."; nullopt if not such a line.
std::optional<Delivery> parse_delivery(std::string_view text);

// Incrementally reads a growing maillog: returns only the complete new lines.
class MaillogTail {
  public:
    explicit MaillogTail(std::string path) : path_(std::move(path)) {}
    // Reads what was appended since the last call; complete lines only.
    std::vector<std::string> read_new_lines();
    // Bytes consumed so far (complete lines).
    std::size_t offset() const { return offset_; }

  private:
    std::string path_;
    std::size_t offset_ = 0;
};

// Splits text into lines (without the newlines), dropping an incomplete last line.
std::vector<std::string> split_lines(const std::string& text);

} // namespace compat
