// A small reader for Postfix queue files (record format of
// docs/postfix-facts.md §2), enough for the live tests: envelope fields, recipients with
// their record offsets, done markers, and the message content.  Follows
// pointer records; stops at the end record.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace live {

struct QueueRecipient {
    int64_t offset = 0; // of the R (or D) record's type byte
    std::string address;
    std::string orig_rcpt;
    std::string dsn_orcpt;
    int notify_flags = 0;
    bool done = false; // the record is D (delivered or cancelled)
};

struct QueueFile {
    int64_t data_size = 0, data_offset = 0, cont_length = 0;
    int rcpt_count = 0, smtputf8 = 0;
    int64_t arrival_sec = 0, arrival_usec = 0;
    bool has_sender = false;
    std::string sender;
    std::string encoding, rewrite_context = "local", envelope_id;
    std::vector<QueueRecipient> recipients;
    std::string content; // the message, lines joined with '\n'
};

// Parses the queue file at `path`; throws std::runtime_error saying what was
// expected when the file is not a complete queue file.
QueueFile read_queue_file(const std::string& path);

} // namespace live
