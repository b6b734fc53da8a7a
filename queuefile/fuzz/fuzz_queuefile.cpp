// libFuzzer target for the queue-file readers: RecordStream, RecordWalker
// (both modes), read_envelope() in small batches, and an in-place update
// followed by a second read.  Besides the sanitizers it checks:
//   * every failure is typed and says what was expected;
//   * every recipient offset points at an 'R' byte of the input;
//   * batches end (a hard cap far above any legitimate count);
//   * after mark_recipient_done() no recipient is read at that offset.
#include "cqmgr/queuefile/envelope.hpp"
#include "cqmgr/queuefile/record.hpp"
#include "cqmgr/queuefile/record_walker.hpp"
#include "cqmgr/queuefile/update.hpp"

#include <cstdint>
#include <cstdlib>
#include <sys/mman.h>
#include <unistd.h>

using namespace cqmgr::queuefile;

namespace {

// Aborts with a message: a finding.
[[noreturn]] void finding(const char* what) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
    std::abort();
}

// Reads the envelope in batches; checks the invariants; returns the
// recipient offsets of the first batch (empty when the read failed).
std::vector<int64_t> read_all(int fd, const uint8_t* data, size_t size) {
    Envelope env;
    std::vector<int64_t> first;
    auto r = read_envelope(fd, env, 2, "fuzz");
    for (int batch = 0; r.ok; ++batch) {
        for (const auto& x : env.recipients) {
            const int64_t at = x.offset();
            if (at < 0 || static_cast<size_t>(at) >= size || data[at] != 'R')
                finding("recipient offset does not point at an 'R' record");
            if (batch == 0) first.push_back(at);
        }
        if (!env.rcpt_offset) break;
        if (batch > 200000) finding("batches do not end");
        r = read_envelope(fd, env, 2, "fuzz");
    }
    if (!r.ok) {
        if (!r.failure || r.failure->expected.empty() || r.error.empty())
            finding("a failure without a typed error");
        return {};
    }
    return first;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static int fd = ::memfd_create("qf", 0);
    if (fd < 0) std::abort();
    if (::ftruncate(fd, 0) != 0) std::abort();
    if (size && ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();

    {
        RecordStream in(fd, "fuzz");
        std::string payload;
        int type;
        while ((type = in.get(payload)) >= 0) {
        }
        if (type == rec::error && in.failure().expected.empty()) finding("untyped record error");
    }
    // postcat -e, postcat (all records), postcat -r.
    for (WalkOptions o : {WalkOptions{true, true}, WalkOptions{true, false}, WalkOptions{false, true}}) {
        RecordWalker w(fd, "fuzz", o);
        WalkedRecord r;
        while (w.next(r)) {
        }
    }

    auto offsets = read_all(fd, data, size);
    if (!offsets.empty()) {
        if (mark_recipient_done(fd, offsets[0], "fuzz")) finding("update refused an 'R' record");
        Envelope env;
        auto r = read_envelope(fd, env, 1000000, "fuzz");
        if (r.ok)
            for (const auto& x : env.recipients)
                if (x.offset() == offsets[0]) finding("a done recipient was read again");
    }
    return 0;
}
