// qf-bench — how fast read_envelope() gets through a big recipient list in
// batches, and how many heap bytes each in-core recipient costs.  Not a test:
// it prints numbers.
//
// Usage: qf-bench [--recipients N] [--batch B] [--passes P] [FILE]
//   Without FILE, writes a synthetic queue file of N recipients (default
//   100,000) laid out as cleanup writes them (A dsn_orig_rcpt, O, R per
//   recipient) to a temporary file.  Each pass reads the whole envelope in
//   batches of B (default 5000, stock qmgr's per-read cap).
#include "cqmgr/queuefile/envelope.hpp"
#include "cqmgr/queuefile/record.hpp"
#include "cqmgr/queuefile/size_record.hpp"

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <malloc.h>
#include <new>
#include <string>
#include <unistd.h>

namespace {
std::atomic<long long> live_bytes{0};
std::atomic<long long> peak_bytes{0};

// Counts an allocation of `p`.
void note_alloc(void* p) {
    long long now = live_bytes += static_cast<long long>(malloc_usable_size(p));
    long long peak = peak_bytes.load();
    while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
    }
}
} // namespace

void* operator new(std::size_t n) {
    void* p = std::malloc(n ? n : 1);
    if (!p) throw std::bad_alloc();
    note_alloc(p);
    return p;
}
void operator delete(void* p) noexcept {
    if (!p) return;
    live_bytes -= static_cast<long long>(malloc_usable_size(p));
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    operator delete(p);
}

using namespace cqmgr::queuefile;

namespace {

// Writes a cleanup-like queue file with `n` recipients; returns its fd.
int synthetic(int n) {
    std::string env =
        encode_record('T', "1700000000 123456") + encode_record('A', "create_time=1700000000") +
        encode_record('A', "rewrite_context=local") + encode_record('S', "list-owner@example.org") +
        encode_record('W', "     1700014400");
    for (int i = 0; i < n; ++i) {
        std::string a = "member" + std::to_string(i) + "@subscriber.example";
        env += encode_record('A', "dsn_orig_rcpt=rfc822;" + a) + encode_record('O', a) +
               encode_record('R', a);
    }
    std::string content =
        encode_record('N', "Subject: bench") + encode_record('N', "") + encode_record('N', "body");
    SizeRecord s;
    s.data_size = static_cast<long>(content.size());
    s.data_offset = 97 + static_cast<long>(env.size()) + 2;
    s.rcpt_count = n;
    s.qmgr_flags = 0;
    s.cont_length = s.data_size;
    std::string file = encode_record('C', format_size_record(s)) + env + encode_record('M', "") +
                       content + encode_record('X', "") + encode_record('E', "");
    char name[] = "/tmp/qf-bench-XXXXXX";
    int fd = ::mkstemp(name);
    if (fd < 0) return -1;
    ::unlink(name);
    if (::write(fd, file.data(), file.size()) != static_cast<ssize_t>(file.size())) return -1;
    return fd;
}

} // namespace

int main(int argc, char** argv) {
    int n = 100000, batch = 5000, passes = 5;
    std::string path;
    CLI::App app{
        "qf-bench: batched envelope reading of a big queue file (default: a synthetic one)"};
    app.add_option("--recipients", n, "recipients of the synthetic file")
        ->check(CLI::PositiveNumber);
    app.add_option("--batch", batch, "recipients per batch")->check(CLI::PositiveNumber);
    app.add_option("--passes", passes, "passes (the best one counts)")->check(CLI::PositiveNumber);
    app.add_option("FILE", path, "a queue file to read instead");
    CLI11_PARSE(app, argc, argv);
    const char* file = path.empty() ? nullptr : path.c_str();
    int fd = file ? ::open(file, O_RDONLY) : synthetic(n);
    if (fd < 0) {
        std::perror(file ? file : "synthetic file");
        return 2;
    }
    off_t size = ::lseek(fd, 0, SEEK_END);

    double best = 1e100;
    long long total = 0, batches = 0, per_rcpt_peak = 0;
    for (int p = 0; p < passes; ++p) {
        Envelope env;
        total = 0;
        batches = 0;
        long long base = live_bytes.load();
        peak_bytes = base;
        auto t0 = std::chrono::steady_clock::now();
        auto r = read_envelope(fd, env, batch, file ? file : "synthetic");
        while (r.ok) {
            total += static_cast<long long>(env.recipients.size());
            ++batches;
            if (!env.rcpt_offset) break;
            r = read_envelope(fd, env, batch);
        }
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!r.ok) {
            std::fprintf(stderr, "read failed: %s\n", r.error.c_str());
            return 1;
        }
        if (secs < best) best = secs;
        long long peak = peak_bytes.load() - base;
        long long in_core = std::min<long long>(batch, total);
        per_rcpt_peak = in_core ? peak / in_core : 0;
    }
    std::printf("file: %s, %lld bytes, %lld recipients in %lld batches of <= %d\n",
                file ? file : "synthetic", static_cast<long long>(size), total, batches, batch);
    std::printf("best of %d passes: %.3f s, %.0f recipients/s, %.1f MB/s\n", passes, best,
                static_cast<double>(total) / best, static_cast<double>(size) / best / 1e6);
    std::printf("peak heap while reading: %lld bytes per in-core recipient (batch of %lld, "
                "read buffer included)\n",
                per_rcpt_peak, std::min<long long>(batch, total));
    ::close(fd);
    return 0;
}
