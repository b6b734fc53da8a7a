#include "cqmgr/queuefile/envelope.hpp"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace cqmgr::queuefile {

namespace {

constexpr std::string_view envelope_types = "MCTcFILSDRO/WVA>K<ion";
constexpr std::string_view extract_types = "EDRO/PreAFIL>Kon";
constexpr int trace_flag_mask = 0x2700;
constexpr int max_backward_jumps = 10000;

// Trims leading and trailing white space.
std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// atol()-like: optional blanks and sign, then digits; stops at the first non-digit.
int64_t c_atol(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    bool neg = false;
    if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
        neg = s.front() == '-';
        s.remove_prefix(1);
    }
    int64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') break;
        v = v * 10 + (c - '0');
    }
    return neg ? -v : v;
}

bool all_digits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

// Maps attribute names that stand for record types.
int attr_record_type(std::string_view name) {
    if (name == "dsn_orig_rcpt") return rec::dsn_orcpt;
    if (name == "notify_flags") return rec::dsn_notify;
    if (name == "envelope_id") return rec::dsn_envid;
    if (name == "ret_flags") return rec::dsn_ret;
    if (name == "create_time") return rec::ctime;
    return 0;
}

// True for a valid NOTIFY mask: NEVER alone, or a subset of SUCCESS|FAILURE|DELAY.
bool notify_ok(int n) {
    return n == dsn_notify::never ||
           (n != 0 && (n & ~(dsn_notify::success | dsn_notify::failure | dsn_notify::delay)) == 0);
}

// Parses the SIZE record like sscanf("%ld %ld %d %d %ld %d"); returns the field count.
int scan_size(const std::string& s, Envelope& env) {
    long f1 = 0, f2 = 0, f5 = 0;
    int f3 = 0, f4 = env.rflags, f6 = 0;
    int n = std::sscanf(s.c_str(), "%ld %ld %d %d %ld %d", &f1, &f2, &f3, &f4, &f5, &f6);
    if (n >= 1) env.data_size = f1;
    if (n >= 2) env.data_offset = f2;
    if (n >= 3) env.rcpt_unread = f3;
    if (n >= 4) env.rflags = f4;
    if (n >= 5) env.cont_length = f5;
    if (n >= 6) env.smtputf8 = f6;
    return n;
}

// Checks VERP delimiters: exactly two characters from a safe set (Postfix's
// default verp_delimiter_filter is "-=+").
bool verp_delims_ok(std::string_view d) {
    if (d.size() != 2) return false;
    for (char c : d)
        if (std::string_view("-=+").find(c) == std::string_view::npos) return false;
    return true;
}

} // namespace

ReadResult read_envelope(int fd, Envelope& env, int limit) {
    ReadResult result;
    RecordStream in(fd);
    std::string buf;
    const int64_t save_offset = env.rcpt_offset;
    const int save_unread = env.rcpt_unread;
    const bool first_pass = save_offset == 0;
    if (first_pass) env.rewrite_context.clear();
    bool have_log_client_attr = false;
    std::optional<std::string> orig_rcpt, dsn_orcpt;
    int notify = 0;
    int backward_jumps = 0;
    int type = 0;
    std::string fail;

    if (limit < 1) limit = 1;
    env.recipients.clear();
    if (!first_pass) {
        if (!in.seek(env.rcpt_offset)) {
            result.error = in.error();
            return result;
        }
        env.rcpt_offset = 0;
    }

    for (;;) {
        std::string_view expected = envelope_types;
        off_t curr = in.tell();
        if (curr == env.data_offset && curr > 0) {
            // Skip the message content; the extracted segment must follow.
            curr += env.data_size;
            in.seek(curr);
            expected = "X";
        }
        type = in.get(buf);
        if (type == rec::ptr) {
            int64_t target = c_atol(buf);
            std::string_view digits = trim(buf);
            if (digits.empty() || !all_digits(digits) || target < 0) {
                fail = "bad pointer record \"" + buf + "\" at offset " + std::to_string(curr);
                type = rec::error;
                break;
            }
            if (target == 0) continue; // padding
            if (target < curr && ++backward_jumps > max_backward_jumps) {
                fail = "too many backward pointer jumps";
                type = rec::error;
                break;
            }
            in.seek(target);
            continue;
        }
        if (type < 0) {
            fail = "message rejected: missing end record";
            if (!in.error().empty()) fail += " (" + in.error() + ")";
            break;
        }
        bool allowed = expected == "X" ? type == rec::xtra
                                       : (envelope_types.find(static_cast<char>(type)) !=
                                              std::string_view::npos ||
                                          extract_types.find(static_cast<char>(type)) !=
                                              std::string_view::npos);
        if (!allowed) {
            fail = std::string("Unexpected record type '") + static_cast<char>(type) +
                   "' at offset " + std::to_string(curr);
            type = rec::error;
            break;
        }
        if (type == rec::end) {
            env.seen_all_non_rcpt = true;
            break;
        }

        std::string_view start = buf;
        std::string_view name, value;
        if (type == rec::attr) {
            auto eq = start.find('=');
            name = trim(start.substr(0, eq == std::string_view::npos ? 0 : eq));
            if (eq == std::string_view::npos || name.empty()) {
                fail = "bad attribute record: " +
                       std::string(eq == std::string_view::npos ? "missing '='" : "missing name") +
                       ": " + std::string(start.substr(0, 200));
                type = rec::error;
                break;
            }
            value = trim(start.substr(eq + 1));
            if (int mapped = attr_record_type(name)) {
                type = mapped;
                start = value;
            }
        }

        if (type == rec::rcpt) {
            if (env.rcpt_offset == 0) {
                env.rcpt_unread--;
                env.recipients.push_back(Recipient{curr, std::string(start),
                                                   orig_rcpt.value_or(""),
                                                   dsn_orcpt.value_or(""), notify});
                orig_rcpt.reset();
                dsn_orcpt.reset();
                notify = 0;
                if (static_cast<int>(env.recipients.size()) >= limit) {
                    env.rcpt_offset = in.tell();
                    if (env.seen_all_non_rcpt) break;
                    if (env.rflags & read_flag::mixed_rcpt_other) continue;
                    if (curr > env.data_offset) {
                        env.seen_all_non_rcpt = true;
                        break;
                    }
                    // Pure recipient section: go read the extracted segment.
                    in.seek(env.data_offset);
                    continue;
                }
            }
            continue;
        }
        if (type == rec::done || type == rec::drcp) {
            if (env.rcpt_offset == 0) {
                env.rcpt_unread--;
                orig_rcpt.reset();
                dsn_orcpt.reset();
                notify = 0;
            }
            continue;
        }
        if (type == rec::dsn_orcpt) {
            if (dsn_orcpt) {
                env.warnings.push_back("ignoring out-of-order DSN original recipient address <" +
                                       dsn_orcpt->substr(0, 200) + ">");
                dsn_orcpt.reset();
            }
            if (env.rcpt_offset == 0) dsn_orcpt = std::string(start);
            continue;
        }
        if (type == rec::dsn_notify) {
            if (notify) {
                env.warnings.push_back("ignoring out-of-order DSN notify flags <" +
                                       std::to_string(notify) + ">");
                notify = 0;
            }
            if (env.rcpt_offset == 0) {
                int n = all_digits(start) ? static_cast<int>(c_atol(start)) : 0;
                if (n == 0 || !notify_ok(n))
                    env.warnings.push_back("ignoring malformed DSN notify flags <" +
                                           std::string(start.substr(0, 200)) + ">");
                else
                    notify = n;
                continue;
            }
        }
        if (type == rec::orcp) {
            if (orig_rcpt) {
                env.warnings.push_back("ignoring out-of-order original recipient <" +
                                       orig_rcpt->substr(0, 200) + ">");
                orig_rcpt.reset();
            }
            if (env.rcpt_offset == 0) orig_rcpt = std::string(start);
            continue;
        }

        // Non-recipient records: only examined once.
        if (env.seen_all_non_rcpt) continue;
        switch (type) {
        case rec::size:
            if (env.data_offset == 0) {
                int n = scan_size(buf, env);
                if (n >= 3) {
                    if (env.data_offset <= 0 || env.data_size <= 0) {
                        fail = "invalid size record: " + buf.substr(0, 100);
                        type = rec::error;
                    } else if (env.rflags & ~read_flag::user_mask) {
                        fail = "invalid flags in size record: " + buf.substr(0, 100);
                        type = rec::error;
                    }
                } else if (n == 1) {
                    // Pre-1.0 file: the content start must be found by scanning.
                    // Such files are older than any supported Postfix; treat as
                    // corrupt rather than guess.
                    fail = "message rejected: pre-1.0 size record is not supported";
                    type = rec::error;
                } else {
                    fail = "message rejected: weird size record";
                    type = rec::error;
                }
            }
            if (type != rec::error) {
                if (env.cont_length == 0) env.cont_length = env.data_size;
                else if (env.cont_length < 0) {
                    fail = "invalid size record: " + buf.substr(0, 100);
                    type = rec::error;
                }
            }
            break;
        case rec::time:
            if (env.arrival_sec == 0) {
                long sec = 0, usec = 0;
                if (std::sscanf(buf.c_str(), "%ld %ld", &sec, &usec) >= 1) {
                    env.arrival_sec = sec;
                    env.arrival_usec = usec;
                }
            }
            break;
        case rec::ctime:
            if (env.create_time == 0) env.create_time = c_atol(start);
            break;
        case rec::filt:
            env.filter = std::string(start);
            break;
        case rec::insp:
            env.inspect = std::string(start);
            break;
        case rec::rdr:
            env.redirect = std::string(start);
            break;
        case rec::from:
            if (!env.sender) {
                env.sender = std::string(start);
                result.sender_seen = true;
                result.opened_size = env.cont_length;
                result.opened_nrcpt = env.rcpt_unread;
            }
            break;
        case rec::dsn_envid:
            env.dsn_envid = std::string(start);
            break;
        case rec::dsn_ret: {
            int n = all_digits(start) ? static_cast<int>(c_atol(start)) : 0;
            if (n != 1 && n != 2)
                env.warnings.push_back(
                    "ignoring malformed DSN RET flags in queue file record:" +
                    std::string(start.substr(0, 100)));
            else
                env.dsn_ret = n;
            break;
        }
        case rec::attr: {
            auto first_wins = [&](std::string& field, std::string_view attr) {
                if (field.empty()) field = std::string(value);
                else
                    env.warnings.push_back("ignoring multiple " + std::string(attr) +
                                           " attribute: " + std::string(value));
            };
            if (name == "encoding") env.encoding = std::string(value);
            else if (name == "client_name") {
                if (!have_log_client_attr && env.client_name.empty()) env.client_name = value;
            } else if (name == "client_address") {
                if (!have_log_client_attr && env.client_addr.empty()) env.client_addr = value;
            } else if (name == "client_port") {
                if (!have_log_client_attr && env.client_port.empty()) env.client_port = value;
            } else if (name == "protocol_name") {
                if (!have_log_client_attr && env.client_proto.empty()) env.client_proto = value;
            } else if (name == "helo_name") {
                if (!have_log_client_attr && env.client_helo.empty()) env.client_helo = value;
            } else if (name == "log_client_name") {
                env.client_name = value;
                have_log_client_attr = true;
            } else if (name == "log_client_address") {
                env.client_addr = value;
                have_log_client_attr = true;
            } else if (name == "log_client_port") {
                env.client_port = value;
                have_log_client_attr = true;
            } else if (name == "log_protocol_name") {
                env.client_proto = value;
                have_log_client_attr = true;
            } else if (name == "log_helo_name") {
                env.client_helo = value;
                have_log_client_attr = true;
            } else if (name == "sasl_method") first_wins(env.sasl_method, name);
            else if (name == "sasl_username") first_wins(env.sasl_username, name);
            else if (name == "sasl_sender") first_wins(env.sasl_sender, name);
            else if (name == "log_ident") first_wins(env.log_ident, name);
            else if (name == "rewrite_context") first_wins(env.rewrite_context, name);
            else if (name == "trace_flags") {
                if (env.tflags == 0) {
                    env.tflags = static_cast<int>(c_atol(value)) & trace_flag_mask;
                    env.tflags_offset = env.tflags == 0x400 ? curr : 0;
                }
            }
            break;
        }
        case rec::warn:
            if (env.warn_offset == 0) {
                env.warn_offset = curr;
                env.warn_time = c_atol(start);
            }
            break;
        case rec::verp:
            if (!env.verp_delims) {
                if (!env.sender || env.sender->empty())
                    env.warnings.push_back("ignoring VERP request for null sender");
                else if (!verp_delims_ok(start))
                    env.warnings.push_back("ignoring bad VERP request: \"" +
                                           std::string(start.substr(0, 100)) + "\"");
                else
                    env.verp_delims = std::string(start);
            }
            break;
        default:
            break;
        }
        if (type == rec::error) break;
    }

    if (type > 0) {
        if (dsn_orcpt)
            env.warnings.push_back("ignoring out-of-order DSN original recipient <" +
                                   dsn_orcpt->substr(0, 200) + ">");
        if (orig_rcpt)
            env.warnings.push_back("ignoring out-of-order original recipient <" +
                                   orig_rcpt->substr(0, 200) + ">");
    }
    if (env.create_time == 0) env.create_time = env.arrival_sec;
    if (env.rewrite_context.empty()) env.rewrite_context = "local";
    if (env.rcpt_unread < 0 || (env.rcpt_offset == 0 && env.rcpt_unread != 0)) {
        env.warnings.push_back("rcpt count mismatch (" + std::to_string(env.rcpt_unread) + ")");
        env.rcpt_unread = 0;
    }

    if (type < 0) {
        result.error = fail;
    } else if (env.arrival_sec == 0) {
        result.error = "message rejected: missing arrival time record";
    } else if (!env.sender) {
        result.error = "message rejected: missing sender record";
    } else if (env.data_offset == 0) {
        result.error = "message rejected: missing size record";
    } else {
        result.ok = true;
        return result;
    }
    env.rcpt_offset = save_offset;
    env.rcpt_unread = save_unread;
    env.recipients.clear();
    return result;
}

} // namespace cqmgr::queuefile
