#include "cqmgr/queuefile/envelope.hpp"

#include "cqmgr/queuefile/attribute.hpp"
#include "cqmgr/queuefile/c_parse.hpp"
#include "cqmgr/queuefile/pointer.hpp"
#include "cqmgr/queuefile/record_types.hpp"
#include "cqmgr/queuefile/size_record.hpp"

#include <algorithm>
#include <limits>

namespace cqmgr::queuefile {

namespace {

// A record's text kept until the recipient it belongs to is read: an
// original recipient or a DSN original recipient.  Its buffer is kept
// from one recipient to the next (an optional<string> made two heap
// copies of each, a large batch's most frequent allocations).
class HeldText {
  public:
    void assign(std::string_view s) {
        text_.assign(s);
        set_ = true;
    }
    void reset() { set_ = false; }
    bool set() const { return set_; }
    std::string_view view() const { return set_ ? std::string_view(text_) : std::string_view(); }

  private:
    std::string text_;
    bool set_ = false;
};

// True for a valid NOTIFY mask: NEVER alone, or a subset of SUCCESS|FAILURE|DELAY.
bool notify_ok(int n) {
    return n == dsn_notify::never ||
           (n != 0 && (n & ~(dsn_notify::success | dsn_notify::failure | dsn_notify::delay)) == 0);
}

// Checks VERP delimiters as verp_delims_verify() does with Postfix's default
// verp_delimiter_filter "-=+": exactly two characters from that set.
bool verp_delims_ok(std::string_view d) {
    if (d.size() != 2) return false;
    for (char c : d)
        if (std::string_view("-=+").find(c) == std::string_view::npos) return false;
    return true;
}

// The text after leading white space.
std::string_view skip_space(std::string_view s) {
    while (!s.empty() && c_isspace(s.front()))
        s.remove_prefix(1);
    return s;
}

// "'S' (sender)" for error messages.
std::string describe_type(int type) {
    std::string s = "'" + escape_bytes(std::string(1, static_cast<char>(type))) + "'";
    return s + " (" + record_type_name(type) + ")";
}

// Which fields have been set once (Postfix tests its pointers for null;
// an empty value still counts as set).
struct Seen {
    bool client_name = false, client_addr = false, client_port = false, client_proto = false,
         client_helo = false, sasl_method = false, sasl_username = false, sasl_sender = false,
         log_ident = false, rewrite_context = false, log_client_attr = false;
};

// The reader's working state for one call.
struct Reader {
    Envelope& env;
    ReadResult& result;
    RecordStream in;
    PointerFollower pointers;
    Seen seen;

    // Records a failure and returns rec::error.
    int fail(std::string stock_text, FileError err, ErrorPrefix prefix = ErrorPrefix::queue_id) {
        result.error = std::move(stock_text);
        result.error_prefix = prefix;
        result.failure = std::move(err);
        return rec::error;
    }
    // A failure of the record stream itself (short or damaged record).
    int record_failure() {
        const FileError& f = in.failure();
        std::string tl = std::to_string(in.record_type());
        switch (f.kind) {
        case ErrorKind::length_overflow:
            result.record_warning = "too many length bits, record type " + tl;
            break;
        case ErrorKind::truncated_header:
            result.record_warning = "unexpected EOF reading length, record type " + tl;
            break;
        case ErrorKind::length_limit:
            result.record_warning =
                "illegal length " + std::to_string(in.record_length()) + ", record type " + tl;
            break;
        case ErrorKind::truncated_payload:
            result.record_warning = "unexpected EOF in data, record type " + tl + " length " +
                                    std::to_string(in.record_length());
            break;
        default:
            result.record_warning.clear();
        }
        return fail("message rejected: missing end record", f);
    }
    // The pre-1.0 scan: count recipients and find the content from the 'M'
    // record's payload (the offset of the extracted segment).
    int old_style_scan();
};

int Reader::old_style_scan() {
    const off_t orig = in.tell();
    in.seek(0);
    env.rcpt_unread = 0;
    std::string buf;
    int type = 0;
    for (;;) {
        off_t at = in.tell();
        type = in.get(buf);
        if (type == rec::ptr) {
            FileError err;
            if (!pointers.follow(in, buf, at, err)) return fail(err.expected, err);
            continue;
        }
        if (type == rec::error) return record_failure();
        if (type <= 0 || type == rec::end) break;
        if (type == rec::dtxt) continue;
        if (type == rec::done || type == rec::rcpt || type == rec::drcp) {
            env.rcpt_unread++;
            continue;
        }
        if (type == rec::mesg && env.data_offset == 0) {
            env.data_offset = in.tell();
            int64_t extra = c_atol(c_string(buf));
            if (extra <= env.data_offset)
                return fail("message rejected: bad extra offset " + std::string(c_string(buf)),
                            FileError{ErrorKind::old_style_scan, in.path(), at,
                                      "a pre-1.0 message content record holding the offset of "
                                      "the extracted segment, beyond " +
                                          std::to_string(env.data_offset),
                                      "\"" + escape_bytes(buf) + "\""});
            in.seek(static_cast<off_t>(extra));
            env.data_size = extra - env.data_offset;
        }
    }
    if (env.data_offset == 0 || type != rec::end)
        return fail(
            "message rejected: envelope records out of order",
            FileError{ErrorKind::old_style_scan, in.path(), in.record_start(),
                      "a pre-1.0 file with a message content record and an end record",
                      env.data_offset == 0 ? "no message content record" : "no end record"});
    in.seek(orig);
    return 0;
}

} // namespace

ReadResult read_envelope(int fd, Envelope& env, int limit, std::string_view path) {
    ReadResult result;
    Reader r{env, result, RecordStream(fd, std::string(path)), {}, {}};
    RecordStream& in = r.in;
    // The record buffer and the held texts keep their room from one call
    // to the next: each call otherwise allocated all three afresh, once
    // per message taken in.
    struct Scratch {
        std::string buf;
        HeldText orig_rcpt, dsn_orcpt;
    };
    thread_local Scratch scratch;
    std::string& buf = scratch.buf;
    HeldText& orig_rcpt = scratch.orig_rcpt;
    HeldText& dsn_orcpt = scratch.dsn_orcpt;
    orig_rcpt.reset();
    dsn_orcpt.reset();
    const int64_t save_offset = env.rcpt_offset;
    const int save_unread = env.rcpt_unread;
    int notify = 0;
    EnvelopeText::Draft text(env.text); // committed once, after the loop
    int type = 0;

    if (limit < 1) limit = 1;
    env.recipients.clear();
    r.pointers.restore(env.pointer_last_target, env.pointer_reverse_jumps);
    if (save_offset != 0) {
        in.seek(static_cast<off_t>(env.rcpt_offset));
        env.rcpt_offset = 0;
    }

    for (;;) {
        bool want_xtra = false;
        off_t curr = in.tell();
        if (curr == env.data_offset && curr > 0) {
            // Skip the message content; the extracted segment must follow.
            if (env.data_size > std::numeric_limits<int64_t>::max() - curr) {
                type = r.fail("message rejected: cannot seek past the message content",
                              FileError{ErrorKind::bad_seek, in.path(), curr,
                                        "a content size that keeps the offset of the extracted "
                                        "segment within range",
                                        "content size " + std::to_string(env.data_size)});
                break;
            }
            curr += static_cast<off_t>(env.data_size);
            in.seek(curr);
            want_xtra = true;
        }
        type = in.get(buf);
        if (type == rec::ptr) {
            FileError err;
            if (!r.pointers.follow(in, buf, curr, err)) {
                std::string stock = err.kind == ErrorKind::pointer_loop
                                        ? "too many reverse jump records"
                                        : "malformed pointer record value: " +
                                              std::string(skip_space(c_string(buf)).substr(0, 100));
                type = r.fail(stock, err, ErrorPrefix::file_path);
                break;
            }
            continue;
        }
        if (type == rec::error) {
            type = r.record_failure();
            break;
        }
        if (type <= 0) {
            type = r.fail(
                "message rejected: missing end record",
                FileError{ErrorKind::missing_end, in.path(), curr,
                          "more records up to the end record 'E'",
                          type == rec::eof ? "end of file" : "a record with type byte 0x00"});
            break;
        }
        bool allowed = want_xtra
                           ? type == rec::xtra
                           : type_in(type, region::envelope) || type_in(type, region::extracted);
        if (!allowed) {
            std::string shown(1, static_cast<char>(type));
            type =
                r.fail("Unexpected record type '" + shown + "' at offset " + std::to_string(curr),
                       FileError{ErrorKind::unexpected_record, in.path(), curr,
                                 want_xtra ? "the extracted segment marker 'X' right after "
                                             "the message content (SIZE record fields 1 and 2)"
                                           : "an envelope record type (one of \"" +
                                                 std::string(region::envelope) + "\" or \"" +
                                                 std::string(region::extracted) + "\")",
                                 "record type " + describe_type(type)},
                       ErrorPrefix::none);
            break;
        }
        if (type == rec::end) {
            env.seen_all_non_rcpt = true;
            break;
        }

        // Postfix handles every payload as a C string.
        std::string_view start = c_string(buf);
        std::string_view name, value;
        if (type == rec::attr) {
            if (const char* why = split_attribute(start, name, value)) {
                type = r.fail("bad attribute record: " + std::string(why) + ": " +
                                  std::string(start.substr(0, 200)),
                              FileError{ErrorKind::bad_attribute, in.path(), curr,
                                        "a named attribute \"name=value\"",
                                        std::string(why) + " in \"" + escape_bytes(buf) + "\""});
                break;
            }
            if (int mapped = attribute_record_type(name)) {
                type = mapped;
                start = value;
            }
        }

        if (type == rec::rcpt) {
            if (env.rcpt_offset == 0) {
                // One allocation for a typical batch, sized by the SIZE
                // record's count (read by now), not by the limit: a
                // one-recipient message does not take room for 5,000.
                if (env.recipients.empty())
                    env.recipients.reserve(
                        static_cast<size_t>(std::clamp(env.rcpt_unread, 1, std::min(limit, 8192))));
                env.rcpt_unread--;
                env.recipients.push_back(
                    Recipient{curr, start, orig_rcpt.view(), dsn_orcpt.view(), notify});
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
                    in.seek(static_cast<off_t>(env.data_offset));
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
            if (dsn_orcpt.set()) {
                result.warnings.push_back("ignoring out-of-order DSN original recipient address <" +
                                          std::string(dsn_orcpt.view().substr(0, 200)) + ">");
                dsn_orcpt.reset();
            }
            if (env.rcpt_offset == 0) dsn_orcpt.assign(start);
            continue;
        }
        if (type == rec::dsn_notify) {
            if (notify) {
                result.warnings.push_back("ignoring out-of-order DSN notify flags <" +
                                          std::to_string(notify) + ">");
                notify = 0;
            }
            if (env.rcpt_offset == 0) {
                int n = all_digits(start) ? c_atoi(start) : 0;
                if (n == 0 || !notify_ok(n))
                    result.warnings.push_back("ignoring malformed DSN notify flags <" +
                                              std::string(start.substr(0, 200)) + ">");
                else
                    notify = n;
                continue;
            }
        }
        if (type == rec::orcp) {
            if (orig_rcpt.set()) {
                result.warnings.push_back("ignoring out-of-order original recipient <" +
                                          std::string(orig_rcpt.view().substr(0, 200)) + ">");
                orig_rcpt.reset();
            }
            if (env.rcpt_offset == 0) orig_rcpt.assign(start);
            continue;
        }

        // Non-recipient records: only examined until all have been seen.
        if (env.seen_all_non_rcpt) continue;
        switch (type) {
        case rec::size: {
            if (env.data_offset == 0) {
                SizeRecord s;
                s.data_size = static_cast<long>(env.data_size);
                s.data_offset = 0;
                s.rcpt_count = env.rcpt_unread;
                s.qmgr_flags = env.rflags;
                s.cont_length = static_cast<long>(env.cont_length);
                s.smtputf8 = env.smtputf8;
                int n = parse_size_record(buf, s);
                env.data_size = s.data_size;
                env.data_offset = s.data_offset;
                env.rcpt_unread = s.rcpt_count;
                env.rflags = s.qmgr_flags;
                env.cont_length = s.cont_length;
                env.smtputf8 = s.smtputf8;
                env.size_fields = n;
                if (n >= 3) {
                    if (env.data_offset <= 0 || env.data_size <= 0) {
                        type = r.fail("invalid size record: " + std::string(start.substr(0, 100)),
                                      FileError{ErrorKind::bad_size, in.path(), curr,
                                                "a SIZE record with positive content size "
                                                "(field 1) and content offset (field 2)",
                                                "\"" + escape_bytes(buf, 100) + "\""});
                        break;
                    }
                    if (env.rflags & ~read_flag::user_mask) {
                        type = r.fail("invalid flags in size record: " +
                                          std::string(start.substr(0, 100)),
                                      FileError{ErrorKind::bad_size_flags, in.path(), curr,
                                                "SIZE record field 4 within 0x1F",
                                                "\"" + escape_bytes(buf, 100) + "\""});
                        break;
                    }
                } else if (n == 1) {
                    env.data_offset = 0;
                    if (r.old_style_scan() == rec::error) {
                        type = rec::error;
                        break;
                    }
                } else {
                    type = r.fail("message rejected: weird size record",
                                  FileError{ErrorKind::weird_size, in.path(), curr,
                                            "a SIZE record with 1 or at least 3 numbers",
                                            "\"" + escape_bytes(buf, 100) + "\""});
                    break;
                }
            }
            if (env.cont_length == 0) {
                env.cont_length = env.data_size;
            } else if (env.cont_length < 0) {
                type = r.fail("invalid size record: " + std::string(start.substr(0, 100)),
                              FileError{ErrorKind::bad_size, in.path(), curr,
                                        "a SIZE record with a content length (field 5) >= 0",
                                        "\"" + escape_bytes(buf, 100) + "\""});
            }
            break;
        }
        case rec::time:
            if (env.arrival_sec == 0) {
                // Seconds, then whatever number follows the leading digits.
                env.arrival_sec = c_atol(start);
                size_t i = 0;
                while (i < start.size() && start[i] >= '0' && start[i] <= '9')
                    ++i;
                env.arrival_usec = c_atol(start.substr(i));
            }
            break;
        case rec::ctime:
            if (env.create_time == 0) env.create_time = c_atol(start);
            break;
        case rec::filt:
            text.set(EnvelopeText::filter, start);
            break;
        case rec::insp:
            text.set(EnvelopeText::inspect, start);
            break;
        case rec::rdr:
            text.set(EnvelopeText::redirect, start);
            break;
        case rec::from:
            if (!text.has(EnvelopeText::sender)) {
                text.set(EnvelopeText::sender, start);
                result.sender_seen = true;
                result.opened_size = env.cont_length;
                result.opened_nrcpt = env.rcpt_unread;
            }
            break;
        case rec::dsn_envid:
            text.set(EnvelopeText::dsn_envid, start);
            break;
        case rec::dsn_ret: {
            int n = all_digits(start) ? c_atoi(start) : 0;
            if (n != 1 && n != 2)
                result.warnings.push_back("ignoring malformed DSN RET flags in queue file record:" +
                                          std::string(start.substr(0, 100)));
            else
                env.dsn_ret = n;
            break;
        }
        case rec::attr: {
            Seen& s = r.seen;
            // Sets a field the first time only; later ones are logged.
            auto first_wins = [&](EnvelopeText::Field field, bool& was_seen) {
                if (!was_seen) {
                    text.set(field, value);
                    was_seen = true;
                } else {
                    result.warnings.push_back("ignoring multiple " + std::string(name) +
                                              " attribute: " + std::string(value));
                }
            };
            // Legacy client attribute: only while no log_* name was seen.
            auto legacy = [&](EnvelopeText::Field field, bool& was_seen) {
                if (!s.log_client_attr && !was_seen) {
                    text.set(field, value);
                    was_seen = true;
                }
            };
            // Logging client attribute: last one wins.
            auto logging = [&](EnvelopeText::Field field, bool& was_seen) {
                text.set(field, value);
                was_seen = true;
                s.log_client_attr = true;
            };
            if (name == "encoding")
                text.set(EnvelopeText::encoding, value);
            else if (name == "client_name")
                legacy(EnvelopeText::client_name, s.client_name);
            else if (name == "client_address")
                legacy(EnvelopeText::client_addr, s.client_addr);
            else if (name == "client_port")
                legacy(EnvelopeText::client_port, s.client_port);
            else if (name == "protocol_name")
                legacy(EnvelopeText::client_proto, s.client_proto);
            else if (name == "helo_name")
                legacy(EnvelopeText::client_helo, s.client_helo);
            else if (name == "log_client_name")
                logging(EnvelopeText::client_name, s.client_name);
            else if (name == "log_client_address")
                logging(EnvelopeText::client_addr, s.client_addr);
            else if (name == "log_client_port")
                logging(EnvelopeText::client_port, s.client_port);
            else if (name == "log_protocol_name")
                logging(EnvelopeText::client_proto, s.client_proto);
            else if (name == "log_helo_name")
                logging(EnvelopeText::client_helo, s.client_helo);
            else if (name == "sasl_method")
                first_wins(EnvelopeText::sasl_method, s.sasl_method);
            else if (name == "sasl_username")
                first_wins(EnvelopeText::sasl_username, s.sasl_username);
            else if (name == "sasl_sender")
                first_wins(EnvelopeText::sasl_sender, s.sasl_sender);
            else if (name == "log_ident")
                first_wins(EnvelopeText::log_ident, s.log_ident);
            else if (name == "rewrite_context")
                first_wins(EnvelopeText::rewrite_context, s.rewrite_context);
            else if (name == "trace_flags") {
                if (env.tflags == 0) {
                    env.tflags = c_atoi(value) & trace_flag::mask;
                    env.tflags_offset = env.tflags == trace_flag::record ? curr : 0;
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
            if (!text.has(EnvelopeText::verp_delims)) {
                if (text.find(EnvelopeText::sender).value_or("").empty())
                    result.warnings.push_back("ignoring VERP request for null sender");
                else if (!verp_delims_ok(start))
                    result.warnings.push_back("ignoring bad VERP request: \"" +
                                              std::string(start.substr(0, 100)) + "\"");
                else
                    text.set(EnvelopeText::verp_delims, start);
            }
            break;
        default:
            break;
        }
        if (type == rec::error) break;
    }

    if (type > 0) {
        if (dsn_orcpt.set())
            result.warnings.push_back("ignoring out-of-order DSN original recipient <" +
                                      std::string(dsn_orcpt.view().substr(0, 200)) + ">");
        if (orig_rcpt.set())
            result.warnings.push_back("ignoring out-of-order original recipient <" +
                                      std::string(orig_rcpt.view().substr(0, 200)) + ">");
    }
    if (save_offset == 0 && !r.seen.rewrite_context) text.reset(EnvelopeText::rewrite_context);
    text.commit(env.text);
    if (env.create_time == 0) env.create_time = env.arrival_sec;
    if (env.rcpt_unread < 0 || (env.rcpt_offset == 0 && env.rcpt_unread != 0)) {
        result.warnings.push_back("rcpt count mismatch (" + std::to_string(env.rcpt_unread) + ")");
        env.rcpt_unread = 0;
    }

    env.pointer_last_target = r.pointers.last_target();
    env.pointer_reverse_jumps = r.pointers.reverse_jumps();

    const int64_t end_at = in.record_start();
    const char* end_found =
        type == rec::end ? "the end record first" : "none up to this recipient record";
    if (type <= 0) {
        // Already described.
    } else if (env.arrival_sec == 0) {
        r.fail("message rejected: missing arrival time record",
               FileError{ErrorKind::missing_time, in.path(), end_at,
                         "a message_arrival_time record 'T' with non-zero seconds before the end "
                         "record",
                         end_found});
    } else if (!env.sender()) {
        r.fail("message rejected: missing sender record",
               FileError{ErrorKind::missing_sender, in.path(), end_at,
                         "a sender record 'S' before the end record", end_found});
    } else if (env.data_offset == 0) {
        r.fail("message rejected: missing size record",
               FileError{ErrorKind::missing_size, in.path(), end_at,
                         "a message_size record 'C' before the end record", end_found});
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
