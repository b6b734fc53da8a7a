#include "queue_file.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace live {

namespace {
// Reads one record at `pos`; false at EOF before the type byte.
bool get_record(const std::string& file, size_t& pos, char& type, std::string& payload) {
    if (pos >= file.size()) return false;
    type = file[pos++];
    uint64_t len = 0;
    for (int shift = 0;; shift += 7) {
        if (shift >= 35 || pos >= file.size())
            throw std::runtime_error("expected a record length, got a truncated or oversized one");
        unsigned char b = static_cast<unsigned char>(file[pos++]);
        len |= static_cast<uint64_t>(b & 0x7f) << shift;
        if (!(b & 0x80)) break;
    }
    if (pos + len > file.size())
        throw std::runtime_error("expected " + std::to_string(len) + " payload bytes, got fewer");
    payload = file.substr(pos, len);
    pos += len;
    return true;
}
} // namespace

QueueFile read_queue_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("expected a readable queue file at " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string file = ss.str();

    QueueFile q;
    QueueRecipient pending;
    bool in_content = false;
    int jumps = 0;
    size_t pos = 0;
    char type;
    std::string payload;
    for (;;) {
        size_t at = pos;
        if (!get_record(file, pos, type, payload))
            throw std::runtime_error("expected an end record in " + path + ", got EOF");
        if (type == 'p') {
            long target = std::stol(payload);
            if (target != 0) {
                if (++jumps > 10000) throw std::runtime_error("pointer loop in " + path);
                pos = static_cast<size_t>(target);
            }
            continue;
        }
        if (in_content) {
            if (type == 'N' || type == 'L') {
                q.content += payload;
                if (type == 'N') q.content += '\n';
            } else if (type == 'X') {
                in_content = false;
            }
            continue;
        }
        switch (type) {
        case 'C':
            if (std::sscanf(payload.c_str(), "%ld %ld %d %*d %ld %d", &q.data_size, &q.data_offset,
                            &q.rcpt_count, &q.cont_length, &q.smtputf8) != 5)
                throw std::runtime_error("expected a six-field size record in " + path + ", got \"" +
                                         payload + "\"");
            if (q.cont_length == 0) q.cont_length = q.data_size;
            break;
        case 'T':
            if (std::sscanf(payload.c_str(), "%ld %ld", &q.arrival_sec, &q.arrival_usec) < 1)
                throw std::runtime_error("expected a time record in " + path + ", got \"" + payload + "\"");
            break;
        case 'S':
            if (!q.has_sender) q.sender = payload;
            q.has_sender = true;
            break;
        case 'A': {
            auto eq = payload.find('=');
            std::string name = payload.substr(0, eq), value = eq == std::string::npos ? "" : payload.substr(eq + 1);
            if (name == "rewrite_context") q.rewrite_context = value;
            else if (name == "encoding") q.encoding = value;
            else if (name == "envelope_id") q.envelope_id = value;
            else if (name == "dsn_orig_rcpt") pending.dsn_orcpt = value;
            else if (name == "notify_flags") pending.notify_flags = std::stoi(value);
            break;
        }
        case 'O': pending.orig_rcpt = payload; break;
        case 'o': pending.dsn_orcpt = payload; break;
        case 'n': pending.notify_flags = std::stoi(payload); break;
        case 'R':
        case 'D':
        case '/':
            pending.offset = static_cast<int64_t>(at);
            pending.address = payload;
            pending.done = type != 'R';
            q.recipients.push_back(pending);
            pending = QueueRecipient{};
            break;
        case 'M': in_content = true; break;
        case 'E': return q;
        default: break;
        }
    }
}

} // namespace live
