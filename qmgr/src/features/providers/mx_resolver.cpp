// MX lookups with c-ares on the Asio loop (see mx_resolver.hpp).
//
// c-ares opens and closes its sockets itself and says so through the
// channel's socket hook: each open socket gets a stream_descriptor that
// waits for what c-ares wants (reading, and writing while a TCP connection
// is made or a query is queued on it), and hands the socket back (release,
// never close) when c-ares closes it.  One timer follows ares_timeout(),
// which covers c-ares's retries and timeouts.
//
// Everything c-ares calls back runs inside an ares_* call; what follows
// from it that calls c-ares again (sending the next queued lookup) is
// posted, and so is every caller's callback.
#include "mx_resolver.hpp"

#include "mx_cache.hpp"
#include "probes.hpp"

#include <algorithm>
#include <ares.h>
#include <deque>
#include <unordered_map>

namespace cqmgr::qmgr {

namespace {

constexpr int class_in = 1, type_mx = 15;

int64_t micros_since(Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t).count();
}

} // namespace

struct MxResolver::Impl : std::enable_shared_from_this<Impl> {
    // One socket of c-ares's, watched.
    struct Watch {
        Watch(asio::any_io_executor ex, int socket) : sd(ex), fd(socket) {}
        asio::posix::stream_descriptor sd;
        int fd;
        bool open = true;
        bool want[2] = {false, false}; // read, write
        bool armed[2] = {false, false};
    };
    // One domain being looked up, with everyone waiting for it.
    struct Lookup {
        Lookup(asio::any_io_executor ex, std::string d) : domain(std::move(d)), deadline(ex) {}
        std::string domain;
        std::vector<Callback> waiters;
        Clock::time_point started = Clock::now();
        asio::steady_timer deadline;
        bool sent = false;     // a query is (or was) in c-ares
        bool finished = false; // the waiters have their answer
    };
    // What c-ares's query callback gets.
    struct Query {
        std::weak_ptr<Impl> impl;
        std::shared_ptr<Lookup> lookup;
    };

    Impl(asio::any_io_executor ex, MxChannel channel, MxResolverOptions options)
        : ex(ex), channel(std::move(channel)), options(std::move(options)), cache(this->options),
          timer(ex) {}

    asio::any_io_executor ex;
    MxChannel channel;
    MxResolverOptions options;
    MxCache cache;
    asio::steady_timer timer; // ares_timeout()
    bool closing = false;
    bool pump_posted = false;
    MxResolverStats stats;
    std::unordered_map<int, std::shared_ptr<Watch>> watches;
    std::unordered_map<std::string, std::shared_ptr<Lookup>> lookups; // unfinished, by domain
    std::deque<std::shared_ptr<Lookup>> queued;
    size_t in_flight = 0;
    size_t waiters = 0;

    // Hooks the channel's sockets to the loop.
    void start() {
        channel.set_socket_hook([this](int fd, bool read, bool write) { socket(fd, read, write); });
    }

    void lookup(std::string_view domain, Callback done) {
        ++stats.lookups;
        std::string key = mx_lookup_key(domain);
        if (key.empty()) {
            deliver(std::move(done), MxAnswer{.outcome = MxOutcome::server_failure});
            return;
        }
        if (const MxAnswer* a = cache.get(key, Clock::now())) {
            ++stats.cache_hits;
            CQMGR_PROBE_MX_LOOKUP_DONE(key.c_str(), outcome_name(a->outcome), a->hosts.size(), 0,
                                       1);
            deliver(std::move(done), *a);
            return;
        }
        if (waiters >= options.max_waiters) return refuse(key, std::move(done));
        if (auto it = lookups.find(key); it != lookups.end()) {
            ++stats.joined;
            ++waiters;
            it->second->waiters.push_back(std::move(done));
            return;
        }
        bool slot = in_flight < options.max_in_flight;
        if (!slot && queued.size() >= options.max_queued) return refuse(key, std::move(done));
        auto l = std::make_shared<Lookup>(ex, key);
        l->waiters.push_back(std::move(done));
        ++waiters;
        lookups.emplace(key, l);
        l->deadline.expires_after(options.deadline);
        l->deadline.async_wait([weak = weak_from_this(), l](error_code ec) {
            auto self = weak.lock();
            if (ec || !self || self->closing || l->finished) return;
            self->deadline_passed(l);
        });
        if (slot)
            send(l);
        else
            queued.push_back(l);
    }

    // Refuses a lookup: too many are waiting.
    void refuse(const std::string& key, Callback done) {
        ++stats.busy;
        CQMGR_PROBE_MX_LOOKUP_DONE(key.c_str(), outcome_name(MxOutcome::busy), size_t(0), 0, 0);
        deliver(std::move(done), MxAnswer{.outcome = MxOutcome::busy});
    }

    // Sends the query of `l` to c-ares.
    void send(const std::shared_ptr<Lookup>& l) {
        l->sent = true;
        ++in_flight;
        ++stats.queries;
        CQMGR_PROBE_MX_LOOKUP_START(l->domain.c_str());
        // c-ares may call back before ares_query() returns (no server, a
        // name it cannot encode): on_query() handles that as any answer.
        ares_query(channel.get(), l->domain.c_str(), class_in, type_mx, &Impl::on_query,
                   new Query{weak_from_this(), l});
        rearm_timer();
    }

    // c-ares's query callback: the answer, or why there is none.
    static void on_query(void* arg, int status, int /*timeouts*/, unsigned char* abuf, int alen) {
        std::unique_ptr<Query> q(static_cast<Query*>(arg));
        auto self = q->impl.lock();
        // ARES_EDESTRUCTION: the channel is being destroyed with the resolver.
        if (!self || self->closing || status == ARES_EDESTRUCTION) return;
        self->answered(q->lookup, status,
                       abuf && alen > 0
                           ? std::span<const unsigned char>(abuf, static_cast<size_t>(alen))
                           : std::span<const unsigned char>());
    }

    void answered(const std::shared_ptr<Lookup>& l, int status,
                  std::span<const unsigned char> reply) {
        --in_flight;
        MxAnswer a = mx_answer_from_reply(status, reply, l->domain);
        // Kept even when the deadline has answered the waiters already: a
        // late answer serves the next lookup.
        cache.put(l->domain, a, Clock::now());
        if (!l->finished) finish(l, a);
        post_pump();
    }

    void deadline_passed(const std::shared_ptr<Lookup>& l) {
        ++stats.deadlines;
        if (!l->sent) std::erase(queued, l);
        MxAnswer a{.outcome = MxOutcome::timeout};
        cache.put(l->domain, a, Clock::now());
        finish(l, a);
    }

    // Gives `a` to everyone waiting for `l`.
    void finish(const std::shared_ptr<Lookup>& l, const MxAnswer& a) {
        l->finished = true;
        l->deadline.cancel();
        if (auto it = lookups.find(l->domain); it != lookups.end() && it->second == l)
            lookups.erase(it);
        CQMGR_PROBE_MX_LOOKUP_DONE(l->domain.c_str(), outcome_name(a.outcome), a.hosts.size(),
                                   micros_since(l->started), 0);
        waiters -= l->waiters.size();
        for (Callback& w : l->waiters)
            deliver(std::move(w), a);
        l->waiters.clear();
    }

    void deliver(Callback done, const MxAnswer& a) {
        ++stats.outcomes[static_cast<size_t>(a.outcome)];
        asio::post(ex, [done = std::move(done), a] { done(a); });
    }

    // Sends queued lookups while there are free slots, from the loop (not
    // from inside c-ares).
    void post_pump() {
        if (pump_posted || queued.empty()) return;
        pump_posted = true;
        asio::post(ex, [weak = weak_from_this()] {
            auto self = weak.lock();
            if (!self || self->closing) return;
            self->pump_posted = false;
            while (self->in_flight < self->options.max_in_flight && !self->queued.empty()) {
                auto l = self->queued.front();
                self->queued.pop_front();
                self->send(l);
            }
        });
    }

    // c-ares opened, changed or closed socket `fd`.
    void socket(int fd, bool read, bool write) {
        auto it = watches.find(fd);
        if (!read && !write) {
            if (it == watches.end()) return;
            close_watch(*it->second);
            watches.erase(it);
            return;
        }
        if (it == watches.end()) {
            auto w = std::make_shared<Watch>(ex, fd);
            error_code ec;
            w->sd.assign(fd, ec);
            if (ec) {
                // Not watched: its queries end by c-ares's timeout.
                ++stats.watch_errors;
                return;
            }
            it = watches.emplace(fd, std::move(w)).first;
        }
        Watch& w = *it->second;
        w.want[0] = read;
        w.want[1] = write;
        arm(it->second, 0);
        arm(it->second, 1);
    }

    // Stops watching: the socket is c-ares's to close.
    static void close_watch(Watch& w) {
        w.open = false;
        error_code ec;
        w.sd.cancel(ec);
        w.sd.release();
    }

    // Waits for `w` to be readable (dir 0) or writable (1), when c-ares
    // wants it and no wait is pending.
    void arm(const std::shared_ptr<Watch>& w, int dir) {
        if (!w->open || !w->want[dir] || w->armed[dir]) return;
        w->armed[dir] = true;
        auto kind = dir ? asio::posix::descriptor_base::wait_write
                        : asio::posix::descriptor_base::wait_read;
        w->sd.async_wait(kind, [weak = weak_from_this(), w, dir](error_code ec) {
            w->armed[dir] = false;
            auto self = weak.lock();
            // c-ares may have stopped wanting it meanwhile.
            if (ec || !w->open || !w->want[dir] || !self || self->closing) return;
            self->ready(w, dir == 0, dir == 1);
        });
    }

    // `w` is ready: c-ares reads or writes what it can.  What it leaves in
    // the socket (it reads a TCP reply's length and then the message, in
    // two calls) is not lost although epoll runs in edge mode: Asio re-arms
    // the descriptor (EPOLL_CTL_MOD) for each new wait, so the wait below
    // sees the data still there (mx_resolver_test's one-write server).
    void ready(const std::shared_ptr<Watch>& w, bool read, bool write) {
        ares_process_fd(channel.get(), read ? w->fd : ARES_SOCKET_BAD,
                        write ? w->fd : ARES_SOCKET_BAD);
        // c-ares may have closed the socket (and even opened another under
        // the same number): then `w` is closed and waits no more.
        arm(w, 0);
        arm(w, 1);
        rearm_timer();
    }

    // Follows ares_timeout(): c-ares's next retry or timeout.
    void rearm_timer() {
        timeval tv{};
        if (!ares_timeout(channel.get(), nullptr, &tv)) {
            timer.cancel();
            return;
        }
        // A millisecond more, so that c-ares finds the time passed.
        timer.expires_after(std::chrono::seconds(tv.tv_sec) +
                            std::chrono::microseconds(tv.tv_usec) + std::chrono::milliseconds(1));
        timer.async_wait([weak = weak_from_this()](error_code ec) {
            auto self = weak.lock();
            if (ec || !self || self->closing) return;
            ares_process_fd(self->channel.get(), ARES_SOCKET_BAD, ARES_SOCKET_BAD);
            self->rearm_timer();
        });
    }

    // Ends everything: no callback of an unfinished lookup is called.
    void close() {
        closing = true;
        timer.cancel();
        for (auto& [domain, l] : lookups)
            l->deadline.cancel();
        lookups.clear();
        queued.clear();
        {
            // c-ares closes its sockets (the hook releases them) and calls
            // the queries back with ARES_EDESTRUCTION (ignored).
            MxChannel gone = std::move(channel);
        }
        for (auto& [fd, w] : watches)
            close_watch(*w);
        watches.clear();
    }
};

MxResolver::MxResolver(asio::any_io_executor ex, MxChannel channel, MxResolverOptions options)
    : impl_(std::make_shared<Impl>(ex, std::move(channel), std::move(options))) {
    impl_->start();
}

MxResolver::~MxResolver() {
    impl_->close();
}

void MxResolver::lookup(std::string_view domain, Callback done) {
    impl_->lookup(domain, std::move(done));
}

const MxAnswer* MxResolver::cached(std::string_view domain) {
    std::string key = mx_lookup_key(domain);
    return key.empty() ? nullptr : impl_->cache.get(key, Clock::now());
}

MxResolverStats MxResolver::stats() const {
    MxResolverStats s = impl_->stats;
    s.in_flight = impl_->in_flight;
    s.queued = impl_->queued.size();
    s.cached = impl_->cache.size();
    return s;
}

const MxResolverOptions& MxResolver::options() const {
    return impl_->options;
}

} // namespace cqmgr::qmgr
