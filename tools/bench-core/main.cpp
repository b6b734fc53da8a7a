// bench-core: the scheduler core's cost per selected entry and its memory per
// in-core recipient, at several sizes, so that growth with the number of
// jobs can be seen.  Not a test: numbers go to docs/performance.md.
//
//   bench-core [MESSAGES DESTINATIONS]...
//   (default: 2000 10000, 20000 100000, 200000 100000; each as a burst
//   arriving in one second and spread at ten messages per second).  Time per
//   entry is given as wall-clock and as the thread's CPU time.
#include "cqmgr/core/scheduler.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <malloc.h>
#include <memory>
#include <random>
#include <vector>

using namespace cqmgr::core;

namespace {

struct NullDriver : Driver {
    Scheduler* s = nullptr;
    void refill(Message&, int) override {}
    void message_done(Message& m) override { s->message_free(m); }
    void defer_recipients(Message&, const std::vector<Recipient>&, const Dsn&) override {}
};

size_t heap_in_use() {
    return mallinfo2().uordblks;
}

// CPU time of this thread in nanoseconds: less disturbed than the wall clock
// by whatever else runs on a shared machine.
double thread_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// One run: `messages` jobs (1% bulk with 200 recipients, the rest 1-3) over
// `dests` destinations, all in core; select and complete every entry.  With
// `spread`, messages arrive ten per second instead of all at once.
void run(int messages, int dests, bool spread) {
    std::mt19937 rng(42);
    NullDriver drv;
    SchedulerConfig cfg;
    cfg.message_recipient_limit = 10'000'000;
    Scheduler s(
        cfg,
        [](const std::string&) {
            TransportConfig tc;
            tc.recipient_limit = 10'000'000;
            tc.dest_concurrency_limit = 20;
            return tc;
        },
        drv);
    drv.s = &s;
    s.set_time(1'000'000);
    std::vector<std::unique_ptr<Message>> msgs;
    std::vector<std::string> names;
    for (int d = 0; d < dests; ++d)
        names.push_back("dest" + std::to_string(d) + ".example");

    size_t heap0 = heap_in_use();
    Transport& t = s.transport("smtp");
    int rcpts = 0;
    for (int i = 0; i < messages; ++i) {
        auto m = std::make_unique<Message>();
        m->id = "M" + std::to_string(i);
        if (spread) s.set_time(1'000'000 + i / 10);
        s.message_add(*m);
        int n = (i % 100 == 0) ? 200 : 1 + static_cast<int>(rng() % 3);
        for (int r = 0; r < n; ++r) {
            const std::string& d = names[rng() % names.size()];
            std::string address = "user" + std::to_string(r) + "@" + d;
            Recipient rc(1000 + r * 40, address, address, "", 0);
            s.assign(*m, s.queue_for(t, d, d), std::move(rc));
        }
        s.batch_done(*m, false, 0);
        rcpts += n;
        msgs.push_back(std::move(m));
    }
    size_t heap1 = heap_in_use();

    // Keep up to 200 deliveries in flight, completing the oldest first.
    std::vector<Entry*> busy;
    long selected = 0;
    auto t0 = std::chrono::steady_clock::now();
    double cpu0 = thread_cpu_ns();
    for (;;) {
        while (busy.size() < 200) {
            Transport* tp = s.select_transport();
            if (!tp) break;
            s.connection_ready(*tp);
            Entry* e = s.select_entry(*tp);
            if (!e) break;
            busy.push_back(e);
            ++selected;
        }
        if (busy.empty()) break;
        size_t half = (busy.size() + 1) / 2;
        for (size_t i = 0; i < half; ++i)
            s.delivery_done(busy[i], DeliveryResult{});
        busy.erase(busy.begin(), busy.begin() + static_cast<long>(half));
    }
    auto t1 = std::chrono::steady_clock::now();
    double cpu = thread_cpu_ns() - cpu0;
    double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
    const CandidateIndex& ix = t.candidates;
    std::printf(
        "%8d messages %8d destinations %9d recipients %-8s: %7.0f ns (CPU %7.0f ns) per "
        "selected+completed entry (%ld entries), %5.0f bytes per in-core recipient; candidate "
        "searches: %ld indexed, %ld scanned\n",
        messages, dests, rcpts, spread ? "spread" : "burst", ns / selected, cpu / selected,
        selected, static_cast<double>(heap1 - heap0) / rcpts, ix.indexed_searches,
        ix.scanned_searches);
}

} // namespace

int main(int argc, char** argv) {
    std::vector<int> numbers;
    CLI::App app{"bench-core: the scheduler core's cost per selected entry and memory per "
                 "in-core recipient"};
    app.add_option("SIZES", numbers, "MESSAGES DESTINATIONS pairs")->check(CLI::PositiveNumber);
    CLI11_PARSE(app, argc, argv);
    if (numbers.size() % 2) {
        std::fprintf(stderr, "bench-core: expected MESSAGES DESTINATIONS pairs\n");
        return 2;
    }
    std::vector<std::pair<int, int>> sizes;
    for (size_t i = 0; i < numbers.size(); i += 2)
        sizes.emplace_back(numbers[i], numbers[i + 1]);
    if (sizes.empty()) sizes = {{2000, 10000}, {20000, 100000}, {200000, 100000}};
    for (bool spread : {false, true})
        for (auto [m, d] : sizes)
            run(m, d, spread);
    return 0;
}
