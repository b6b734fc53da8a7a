// The daemon's parts on a scratch queue directory, for the unit tests of
// the orchestration (Intake, MessageEnd, Feeder): the real file store on a
// temporary queue directory, in-process stand-ins for trivial-rewrite and
// the bounce daemon's services on its private/ sockets, a clock the test
// sets, and the log lines the parts write, caught on a postlog socket.
// Nothing here needs root or a Postfix.
#pragma once

#include "clock.hpp"
#include "counters.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/core/scheduler.hpp"
#include "cqmgr/protocol/attr_writer.hpp"
#include "cqmgr/queuefile/active_queue.hpp"
#include "cqmgr/test/temp_dir.hpp"
#include "fake_server.hpp"
#include "intake.hpp"
#include "log.hpp"
#include "message_end.hpp"
#include "qf_builder.hpp"
#include "recovery_ramp.hpp"
#include "resolver.hpp"
#include "scheduler_config.hpp"
#include "service_slots.hpp"
#include "store_retry.hpp"
#include "test_params.hpp"
#include "transport_settings.hpp"
#include "warning_limiter.hpp"

#include <atomic>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <poll.h>
#include <string>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <thread>
#include <utime.h>
#include <vector>

namespace cqmgr::qmgr::testing {

using namespace std::string_literals;

// A wall clock that stands still until the test moves it.
class FakeClock final : public WallClock {
  public:
    int64_t t = 1'800'000'000;
    int64_t now() const override { return t; }
    protocol::TimeVal precise() const override { return {t, 0}; }
};

// What the daemon logs while it lives: log lines go to a postlog socket of
// its own, drained by a thread (a datagram socket holds a few lines only,
// and the test's event loop runs in the thread that logs).  `verbose` is
// the -v level.  At its end the log channel falls back to standard error.
class LogCapture {
  public:
    LogCapture(const std::string& path, int verbose = 0) : path_(path) {
        fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        sockaddr_un sun{};
        sun.sun_family = AF_UNIX;
        path.copy(sun.sun_path, sizeof sun.sun_path - 1);
        EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&sun), sizeof sun), 0);
        init(verbose);
        drainer_ = std::thread([this] {
            while (!stop_) {
                pollfd p{fd_, POLLIN, 0};
                ::poll(&p, 1, 20);
                drain();
            }
        });
    }
    ~LogCapture() {
        init(0); // verbose off again; the socket goes, so lines go to stderr
        stop_ = true;
        drainer_.join();
        ::close(fd_);
        ::unlink(path_.c_str());
    }
    LogCapture(const LogCapture&) = delete;
    LogCapture& operator=(const LogCapture&) = delete;

    // Every line logged so far, without the time stamp, host and tag.
    std::vector<std::string> lines() {
        drain();
        std::lock_guard lock(mutex_);
        return lines_;
    }
    // True when a line that is exactly `line` was logged.
    bool has(const std::string& line) {
        for (const auto& l : lines())
            if (l == line) return true;
        return false;
    }
    // True when a logged line contains `part`.
    bool has_part(const std::string& part) {
        for (const auto& l : lines())
            if (l.find(part) != std::string::npos) return true;
        return false;
    }
    // All lines, one a line, for a failure's message.
    std::string text() {
        std::string out;
        for (const auto& l : lines())
            out += l + "\n";
        return out;
    }
    void clear() {
        drain();
        std::lock_guard lock(mutex_);
        lines_.clear();
    }

  private:
    void init(int verbose) {
        log::Options o;
        o.postlog_path = path_;
        o.verbose = verbose;
        log::init(o);
    }
    // Moves the lines waiting on the socket into lines_.
    void drain() {
        std::lock_guard lock(mutex_);
        char buf[4096];
        for (ssize_t n; (n = ::recv(fd_, buf, sizeof buf, 0)) > 0;) {
            std::string line(buf, static_cast<size_t>(n));
            auto at = line.find("]: ");
            lines_.push_back(at == std::string::npos ? line : line.substr(at + 3));
        }
    }

    std::string path_;
    int fd_ = -1;
    std::mutex mutex_;
    std::vector<std::string> lines_;
    std::atomic<bool> stop_{false};
    std::thread drainer_;
};

// Whether a test may run the process out of descriptors in this build.
// Not under the sanitizers: their runtime checks open descriptors of their
// own (UBSan's check of an object's dynamic type probes memory through a
// pipe), and without one they report a sound object as a bad one.  Under
// the sanitizers, qmgr.fault.live still fails a later batch's open with
// EMFILE, through a preloaded shim instead.
inline constexpr bool descriptors_may_run_out =
#ifdef __SANITIZE_ADDRESS__
    false;
#else
    true;
#endif
#define SKIP_UNLESS_DESCRIPTORS_MAY_RUN_OUT()                                                      \
    if (!descriptors_may_run_out) GTEST_SKIP() << "the sanitizers need descriptors of their own"

// Lowers the descriptor limit to the descriptors open now, so that the
// next open() fails with EMFILE (as it can for a busy daemon), until it
// goes.  Root is bound by the limit too.
class NoMoreDescriptors {
  public:
    NoMoreDescriptors() {
        ::getrlimit(RLIMIT_NOFILE, &old_);
        int fd = ::open("/dev/null", O_RDONLY);
        ::close(fd);
        rlimit low = old_;
        low.rlim_cur = static_cast<rlim_t>(fd);
        EXPECT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
    }
    ~NoMoreDescriptors() { ::setrlimit(RLIMIT_NOFILE, &old_); }

  private:
    rlimit old_{};
};

// A queue directory with Postfix's queues and service directories, as the
// working directory, and the daemon's file store on it (deferred and defer
// hashed one level deep, as by default).
struct QueueDir {
    test::TempDir dir{"cqmgr-daemon"};
    test::InDirectory in{dir.path()};
    queuefile::ActiveQueue store{queuefile::QueueLayout({"deferred", "defer"}, 1), false};

    QueueDir() {
        for (const char* q : {"incoming", "active", "deferred", "corrupt", "saved", "bounce",
                              "defer", "trace", "private", "public"})
            std::filesystem::create_directories(q);
    }
    // Writes `bytes` as `id` in `queue`, complete (u=rwx, or `mode`), with
    // the time `mtime` when it is not 0.
    void put(const std::string& queue, const std::string& id, const std::string& bytes,
             mode_t mode = 0700, int64_t mtime = 0) const {
        std::string path = store.path(queue, id);
        std::filesystem::create_directories(std::filesystem::path(path).parent_path());
        std::ofstream(path, std::ios::binary) << bytes;
        ::chmod(path.c_str(), mode);
        if (mtime != 0) {
            utimbuf t{static_cast<time_t>(mtime), static_cast<time_t>(mtime)};
            ::utime(path.c_str(), &t);
        }
    }
    bool exists(const std::string& queue, const std::string& id) const {
        return std::filesystem::exists(store.path(queue, id));
    }
    // The modification time of `id` in `queue`: the not-before time of a
    // deferred file.
    int64_t mtime(const std::string& queue, const std::string& id) const {
        struct stat st {};
        ::stat(store.path(queue, id).c_str(), &st);
        return st.st_mtime;
    }
    std::string read(const std::string& path) const { return dir.read(path); }
};

// A queue file as cleanup writes it: arrival time `arrival`, sender
// `sender`, one recipient record for each of `rcpts`, and `extra`
// envelope records (encoded) after the sender.
inline std::string queue_file(const std::vector<std::string>& rcpts, int64_t arrival,
                              const std::string& sender = "s@example.org",
                              const std::string& extra = "") {
    qftest::QfBuilder b;
    b.envelope = queuefile::encode_record('T', std::to_string(arrival) + " 0") +
                 queuefile::encode_record('S', sender) + extra;
    for (const auto& r : rcpts)
        b.envelope += queuefile::encode_record('R', r);
    b.rcpts = static_cast<int>(rcpts.size());
    return b.build();
}

// A driver that notes what the scheduler asks of the daemon.
struct NoteDriver : core::Driver {
    std::vector<std::string> deferred; // "address: status reason"
    std::vector<std::pair<core::Message*, int>> refills;
    std::vector<core::Message*> done;
    void refill(core::Message& m, int limit) override { refills.emplace_back(&m, limit); }
    void message_done(core::Message& m) override { done.push_back(&m); }
    void defer_recipients(core::Message&, const std::vector<core::Recipient>& rcpts,
                          const core::Dsn& dsn) override {
        for (const auto& r : rcpts)
            deferred.push_back(std::string(r.address()) + ": " + dsn.status + " " + dsn.reason);
    }
};

inline const std::string rewrite_hello = "protocol\0trivial_rewrite_protocol\0\0"s;
inline const std::string status_hello = "protocol\0delivery_status_protocol\0\0"s;

// A trivial-rewrite stand-in on private/rewrite: `transport_of` names the
// transport of each address (its nexthop is the domain; "!fail" answers
// with the resolver's failure flag, "local" with the local class); a
// rewrite request is answered with the address and "@rewritten" after it.
// The addresses asked to resolve are noted in `asked`.
inline fake::Server::Script
rewrite_service(std::function<std::string(const std::string&)> transport_of,
                std::vector<std::string>* asked) {
    return [=](fake::Socket& s, int) -> awaitable<void> {
        if (!co_await fake::send(s, rewrite_hello)) co_return;
        fake::ListReader r;
        for (;;) {
            protocol::AttrList req;
            if (!co_await r.read(s, req)) co_return;
            std::string address(req.get("address").value_or(""));
            protocol::AttrWriter w;
            if (req.get("request") == "rewrite") {
                w.num("flags", 0).str("address", address + "@rewritten").end();
            } else {
                if (asked) asked->push_back(address);
                std::string transport = transport_of(address);
                int flags = protocol::resolve_flag::class_default;
                if (transport == "!fail") {
                    transport = "smtp";
                    flags |= protocol::resolve_flag::fail;
                } else if (transport == "local") {
                    flags = protocol::resolve_flag::class_local;
                }
                auto at = address.find('@');
                w.num("flags", 0)
                    .str("transport", transport)
                    .str("nexthop", at == std::string::npos ? "" : address.substr(at + 1))
                    .str("recipient", address)
                    .num("flags", flags)
                    .end();
            }
            if (!co_await fake::send(s, w.take())) co_return;
        }
    };
}

// Every address goes to smtp.
inline std::string all_smtp(const std::string&) {
    return "smtp";
}

// A bounce daemon stand-in (private/bounce, defer or trace): answers each
// request with `status`, and notes its nrequest and flags in `seen`.
inline fake::Server::Script status_service(int status, std::vector<std::string>* seen) {
    return [=](fake::Socket& s, int) -> awaitable<void> {
        if (!co_await fake::send(s, status_hello)) co_return;
        fake::ListReader r;
        protocol::AttrList req;
        if (!co_await r.read(s, req)) co_return;
        if (seen)
            seen->push_back("nrequest=" + std::string(req.get("nrequest").value_or("")) +
                            " flags=" + std::string(req.get("flags").value_or("")));
        protocol::AttrWriter w;
        w.num("status", status).end();
        co_await fake::send(s, w.take());
    };
}

// What each part of the daemon stands on: a scratch queue directory with
// its file store, the log, the configuration from main.cf text
// `main_cf` (-v level `verbose`), a fake clock, the event loop, and the
// scheduler as the daemon configures it.
struct Ground {
    QueueDir q;
    LogCapture log;
    Config cfg;
    const conf::QmgrParams& params = cfg.params;
    FakeClock clock;
    asio::io_context io;
    WarningLimiter limiter;
    StoreRetry retry{io, clock, limiter};
    Counters counters;
    TransportSettings settings{cfg.cf, params};
    NoteDriver driver;
    // The messages a test took: they outlive the scheduler, which points
    // at them.
    std::vector<std::unique_ptr<Message>> messages;
    core::Scheduler sched{scheduler_config(params),
                          [this](const std::string& t) { return settings(t); }, driver};

    explicit Ground(const std::string& main_cf, int verbose)
        : log(q.dir.file("postlog"), verbose), cfg(main_cf) {
        sched.set_time(clock.now());
    }
};

// The parts that take a message in and end it.  Recipients that cannot be
// routed at all are noted in `self_deferred` ("address: status reason").
struct Parts : Ground {
    Resolver resolver{io.get_executor(), params.rewrite_service_name,
                      std::chrono::seconds(params.qmgr_ipc_timeout), counters};
    std::vector<std::string> self_deferred;
    Intake intake{
        params,
        clock,
        q.store,
        retry,
        resolver,
        sched,
        [this](Message&, const std::vector<queuefile::Recipient>& rcpts, const core::Dsn& dsn) {
            for (const auto& r : rcpts)
                self_deferred.push_back(std::string(r.address()) + ": " + dsn.status + " " +
                                        dsn.reason);
        }};
    RecoveryRamp ramp{io, params, clock, [] {}};
    ServiceSlots slots{io.get_executor(), 8};
    MessageEnd end{params, clock, q.store, retry, intake, sched, counters, ramp, slots};

    explicit Parts(const std::string& main_cf = "", int verbose = 0) : Ground(main_cf, verbose) {}

    // Claims `id` from `queue` as the feeder hands it over; the message,
    // if any, is kept in `messages` and `taken` points at it.
    Intake::Claimed claim(const std::string& id, const std::string& queue = "incoming",
                          int scan_flags = 0, mode_t mode = 0700) {
        Intake::Claimed c = intake.claim(id, queue, scan_flags, mode);
        taken = c.message.get();
        if (c.message) messages.push_back(std::move(c.message));
        return c;
    }
    Message* taken = nullptr;
};

// Runs `io` until `done()` holds (at most 10 s, which fails the test).
inline void run_until(asio::io_context& io, const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
        if (io.stopped()) io.restart();
        io.run_one_for(std::chrono::milliseconds(20));
    }
    EXPECT_TRUE(done()) << "not done within 10 s";
}

// Runs the coroutine `task` on `io` to its end; returns its result.
template <class T> T run_task(asio::io_context& io, awaitable<T> task) {
    return fake::run(io, std::move(task));
}

} // namespace cqmgr::qmgr::testing
