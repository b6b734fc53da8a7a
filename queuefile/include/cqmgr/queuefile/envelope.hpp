// Reading a message's envelope the way qmgr does: the non-recipient records
// once, the recipients in batches.  A batch stops after `limit` recipients and
// remembers where to resume, so a message with a huge recipient list never has
// to be held in memory at once.
#pragma once

#include "cqmgr/common/recipient.hpp"
#include "cqmgr/queuefile/envelope_text.hpp"
#include "cqmgr/queuefile/error.hpp"
#include "cqmgr/queuefile/record.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::queuefile {

// SIZE record field 4 bits.
namespace read_flag {
inline constexpr int mixed_rcpt_other = 0x01;
inline constexpr int dsn_notify_mask = 0x1e;
inline constexpr int user_mask = 0x1f;
} // namespace read_flag

// The trace_flags bits an envelope keeps (Postfix's DEL_REQ_TRACE_FLAGS in
// 3.7), and the one that says the file's own trace record is to be
// removed once its report is out (DEL_REQ_FLAG_RECORD).
namespace trace_flag {
inline constexpr int mask = 0x2700;
inline constexpr int record = 0x0400;
} // namespace trace_flag

// DSN NOTIFY bits as stored in notify_flags.
namespace dsn_notify {
inline constexpr int never = 1, success = 2, failure = 4, delay = 8;
} // namespace dsn_notify

// One recipient: its R record's offset, address, original address, DSN
// original recipient and NOTIFY flags.  The scheduler core carries the
// same class in its entries.
using Recipient = cqmgr::Recipient;

// Laid out largest first: an active message keeps its envelope for its
// whole life.
struct Envelope {
    // SIZE record.
    int64_t data_size = 0;
    int64_t data_offset = 0;
    int64_t cont_length = 0;

    int64_t arrival_sec = 0, arrival_usec = 0;
    int64_t create_time = 0;
    int64_t tflags_offset = 0;
    int64_t warn_offset = 0;
    int64_t warn_time = 0;
    // Pointer-loop guard shared by all batches of this message (Postfix
    // keeps one counter per file): the last jump target and the number of
    // backward jumps so far.  A pointer cycle through recipient records
    // therefore ends in an error instead of endless batches.
    int64_t pointer_last_target = 0;
    // Where the next recipient batch starts; 0 when none was left unread.
    int64_t rcpt_offset = 0;
    // The sender and the other text attributes, packed
    // (envelope_text.hpp); read them through the accessors below, set them
    // through text.set().
    EnvelopeText text;
    // The current batch.
    std::vector<Recipient> recipients;

    int rcpt_unread = 0;
    int rflags = read_flag::mixed_rcpt_other;
    int smtputf8 = 0;
    int dsn_ret = 0;
    int tflags = 0;
    int pointer_reverse_jumps = 0;
    // SIZE record field count (1: a pre-1.0 file whose content start was
    // found by scanning; 3..6: modern).
    int size_fields = 0;
    bool seen_all_non_rcpt = false;

    // The sender; none until the S record was read (a file without one is
    // corrupt); empty for the null sender.
    std::optional<std::string_view> sender() const { return text.find(EnvelopeText::sender); }
    // The text attributes; empty when the file has none.
    std::string_view encoding() const { return text.get(EnvelopeText::encoding); }
    std::string_view dsn_envid() const { return text.get(EnvelopeText::dsn_envid); }
    std::string_view client_name() const { return text.get(EnvelopeText::client_name); }
    std::string_view client_addr() const { return text.get(EnvelopeText::client_addr); }
    std::string_view client_port() const { return text.get(EnvelopeText::client_port); }
    std::string_view client_proto() const { return text.get(EnvelopeText::client_proto); }
    std::string_view client_helo() const { return text.get(EnvelopeText::client_helo); }
    std::string_view sasl_method() const { return text.get(EnvelopeText::sasl_method); }
    std::string_view sasl_username() const { return text.get(EnvelopeText::sasl_username); }
    std::string_view sasl_sender() const { return text.get(EnvelopeText::sasl_sender); }
    std::string_view log_ident() const { return text.get(EnvelopeText::log_ident); }
    // "local" unless the file says otherwise.
    std::string_view rewrite_context() const {
        return text.has(EnvelopeText::rewrite_context) ? text.get(EnvelopeText::rewrite_context)
                                                       : std::string_view("local");
    }
    // The records that may be absent: L (transport[:nexthop]), I, > and V.
    std::optional<std::string_view> filter() const { return text.find(EnvelopeText::filter); }
    std::optional<std::string_view> inspect() const { return text.find(EnvelopeText::inspect); }
    std::optional<std::string_view> redirect() const { return text.find(EnvelopeText::redirect); }
    std::optional<std::string_view> verp_delims() const {
        return text.find(EnvelopeText::verp_delims);
    }
};

// What stock's warning about a read failure starts with: who says it
// decides.  qmgr itself names the queue ID; the record reader, which
// follows pointer records, names the file; qmgr's "Unexpected record
// type" line names neither.
enum class ErrorPrefix {
    queue_id,  // "ID: message rejected: missing end record"
    file_path, // "active/ID: malformed pointer record value: ..."
    none,      // "Unexpected record type 'N' at offset 123"
};

struct ReadResult {
    bool ok = false;
    // When !ok: the reason, worded as stock qmgr's warning without its
    // prefix (e.g. "message rejected: missing end record"), and the prefix
    // that goes before it.
    std::string error;
    ErrorPrefix error_prefix = ErrorPrefix::queue_id;
    // When the file could not be opened at all: the errno of open(2) (the
    // file itself may be fine), else 0.
    int open_errno = 0;
    // Complaints that do not make the file corrupt, worded as stock qmgr logs
    // them (without the "ID: " prefix); the caller logs them as warnings.
    std::vector<std::string> warnings;
    // When the failure is a damaged record, stock Postfix's record reader
    // first logs its own warning, prefixed with the file path ("active/ID: ")
    // before the "missing end record" line; this is its text, else "".
    std::string record_warning;
    // When !ok: the same failure, typed, with the file, the byte offset of
    // the offending record and what was expected there.
    std::optional<FileError> failure;
    // True when the sender record was seen (stock logs "from=" even then),
    // with the size and recipient count as they stood at that moment: those
    // are what the "from=<...>, size=N, nrcpt=N (queue active)" line shows.
    bool sender_seen = false;
    int64_t opened_size = 0;
    int opened_nrcpt = 0;
};

// Reads the next batch of at most `limit` recipients (limit >= 1) from the
// open queue file `fd` into `env`, with stock qmgr's rules
// (qmgr_message_read): pointers followed, content skipped via the SIZE
// record, region rules, first/last-wins per field, DSN and original
// recipient records attached to the next recipient.  The first call
// (env.rcpt_offset == 0 on a fresh Envelope) also reads every non-recipient
// record; when it returns with env.rcpt_offset != 0, more recipients remain
// and the next call resumes there, holding only one batch in memory.
// Only the trace bits of trace_flags are kept (trace_flag::mask).
// `path` names the file in typed errors.
ReadResult read_envelope(int fd, Envelope& env, int limit, std::string_view path = {});

} // namespace cqmgr::queuefile
