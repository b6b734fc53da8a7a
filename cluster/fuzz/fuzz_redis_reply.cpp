// libFuzzer target for what cqmgr makes of Redis's replies: the input's
// bytes go to hiredis's reader (as if a server had sent them), and each
// reply it makes is copied and read every way cqmgr reads one: as a lease,
// a renewal (the input's first byte is the number of leases renewed), a
// rate step, a dead mark, a board's records, Sentinel's master address,
// ROLE and INFO.
// The reader is guarded as the client's are (guard_reader: no array table
// allocated from a count alone).  Besides the sanitizers it checks that
// what is read is within the bounds the daemon relies on:
//   * a wait is finite, not negative, and at most max_reply_wait_ms;
//   * lease counts are not negative, and a renewal has one flag per lease;
//   * a dead mark is a 4.x.y status with a one-line reason, still running;
//   * a board's records are at most max_board_records, each with a field
//     and an id of one printable line, a value of one line, within
//     max_board_text; an unchanged board has none;
//   * a master address has a host and a port in 1..65535;
//   * a role is one of the three, a run_id 40 hex digits.
#include "cqmgr/cluster/redis_replies.hpp"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <hiredis/hiredis.h>

using namespace cqmgr::cluster;

namespace {

// Aborts with a message: a finding.
[[noreturn]] void finding(const char* what) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
    std::abort();
}

bool sane_wait(double ms) {
    return std::isfinite(ms) && ms >= 0 && ms <= max_reply_wait_ms;
}

void check(const RedisReply& r, size_t renewing) {
    (void)describe(r);
    LeaseAnswer l = read_lease_answer(r);
    if (!l.failed && (l.live < 0 || !sane_wait(l.retry_after_ms))) finding("lease answer");
    RenewAnswer n = read_renew_answer(r, renewing);
    if (!n.failed && (n.live < 0 || n.kept.size() != renewing)) finding("renew answer");
    RateAnswer a = read_rate_answer(r);
    if (!a.failed && (!sane_wait(a.wait_ms) || !sane_wait(a.retry_after_ms))) finding("rate wait");
    auto [failed, mark] = read_dead_mark(r);
    if (mark) {
        if (failed) finding("a dead mark that failed");
        if (mark->status.size() < 5 || mark->status.substr(0, 2) != "4.") finding("mark status");
        if (mark->remaining_ms <= 0) finding("mark without time left");
        for (unsigned char c : mark->reason)
            if (c < 0x20 || c == 0x7f) finding("control character in a mark's reason");
    }
    BoardAnswer b = read_board_answer(r);
    if (!b.failed) {
        if (b.records.size() > max_board_records || (!b.changed && !b.records.empty()))
            finding("board records");
        for (const BoardRecord& rec : b.records) {
            if (rec.field.empty() || rec.id.empty() || rec.field.size() > max_board_text ||
                rec.value.size() > max_board_text || rec.since_ms < 0 || rec.expires_ms < 0)
                finding("board record bounds");
            for (const std::string* s : {&rec.field, &rec.id})
                for (unsigned char c : *s)
                    if (c < 0x20 || c == 0x7f) finding("control character in a board id");
            for (unsigned char c : rec.value)
                if ((c < 0x20 && c != '\t') || c == 0x7f) finding("line end in a board value");
        }
    } else if (!b.records.empty()) {
        finding("a failed board read with records");
    }
    if (auto m = read_master_address(r))
        if (m->host.empty() || m->port < 1 || m->port > 65535) finding("master address");
    std::string role = read_role(r);
    if (!role.empty() && role != "master" && role != "slave" && role != "sentinel") finding("role");
    if (auto id = read_run_id(r)) {
        if (id->size() != 40) finding("run_id length");
        for (unsigned char c : *id)
            if (!std::isxdigit(c)) finding("run_id digit");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    size_t renewing = data[0] % 8;
    redisReader* reader = redisReaderCreate();
    if (!reader) return 0;
    guard_reader(reader); // as the client's connections are
    // In two pieces, as replies arrive in reads of any size.
    size_t half = (size - 1) / 2;
    const char* bytes = reinterpret_cast<const char*>(data) + 1;
    for (auto [from, len] : {std::pair{size_t{0}, half}, std::pair{half, size - 1 - half}}) {
        if (redisReaderFeed(reader, bytes + from, len) != REDIS_OK) break;
        for (;;) {
            void* reply = nullptr;
            if (redisReaderGetReply(reader, &reply) != REDIS_OK || !reply) break;
            check(from_hiredis(static_cast<redisReply*>(reply)), renewing);
            freeReplyObject(reply);
        }
    }
    redisReaderFree(reader);
    return 0;
}
