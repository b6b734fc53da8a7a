// The c-ares channel that MX lookups go through, opened before the jail.
//
// c-ares reads its configuration when a channel is made: /etc/resolv.conf
// (the name servers and options), /etc/nsswitch.conf and /etc/host.conf,
// and /dev/urandom for the key of its query IDs.  None of them is inside
// the queue directory, so the daemon opens the channel in pre_jail(), as
// root, where the files are root's own configuration and nothing
// mail_owner owns is on the way.  The channel keeps no descriptor: it
// opens its sockets (UDP, and TCP for a truncated reply) at the first
// query, which needs no file, so it works in the chroot and as
// mail_owner.  A change of resolv.conf is seen at the next start of the
// daemon (postfix reload), as for the other files read before the jail.
//
// With `cqmgr_dns_servers` set, its servers replace resolv.conf's.
#pragma once

#include "cqmgr/common/result.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

struct ares_channeldata;

namespace cqmgr::conf {
struct QmgrParams;
}

namespace cqmgr::qmgr {

struct MxResolverOptions {
    // Name servers as "address:port" (IPv4:PORT or [IPv6]:PORT; the port
    // may be left out for 53); empty = /etc/resolv.conf's.
    std::vector<std::string> servers;
    // Another file than /etc/resolv.conf (tests).
    std::string resolv_conf;
    // A lookup's deadline, from the call of lookup(): then it ends as a
    // timeout, whatever DNS does.  c-ares's own timeout and tries are set
    // so that it gives the query up about then, too (see MxChannel).
    std::chrono::milliseconds deadline{5000};
    // c-ares's timeout of its first try (the second waits twice as long);
    // 0 = a third of the deadline.  Tests set it longer than the deadline.
    std::chrono::milliseconds query_timeout{0};
    // Queries sent and not yet finished, at most (those past their
    // deadline count until c-ares gives them up); beyond that lookups
    // wait in a queue of at most `max_queued`, and beyond that they are
    // refused as busy.  A lookup of a domain already asked for joins it
    // (at most `max_waiters` callbacks wait in all).
    size_t max_in_flight = 32;
    size_t max_queued = 1024;
    size_t max_waiters = 4096;
    // Answers kept, at most (the least recently used go first).
    size_t cache_size = 10000;
    // The TTLs an answer is kept for: a positive one's (MX records) and a
    // negative one's (no MX, NXDOMAIN; 0 in the reply, as when it has no
    // SOA, gives the minimum) are clamped to these.
    std::chrono::seconds min_ttl{60};
    std::chrono::seconds max_ttl{std::chrono::hours(24)};
    std::chrono::seconds negative_min_ttl{60};
    std::chrono::seconds negative_max_ttl{std::chrono::hours(1)};
    // A timeout or server failure is kept this long, so that a DNS
    // outage does not make every destination ask again at once; 0 keeps
    // none.  Busy is never kept.
    std::chrono::seconds failure_ttl{30};
};

// The options the daemon's configuration gives (cqmgr_dns_servers; the
// rest are the defaults above).
MxResolverOptions mx_resolver_options(const conf::QmgrParams& params);

// A c-ares channel, and the hook through which it tells its owner which of
// its sockets to watch (set by MxResolver; none before, as no socket is
// opened before the first query).
class MxChannel {
  public:
    // fd, and whether c-ares wants to read and to write it; (fd, false,
    // false) when it closes the socket.
    using SocketHook = std::function<void(int fd, bool read, bool write)>;

    // Makes a channel: the library's initialisation, the channel with the
    // options (resolv.conf read now), and the servers of `options` when
    // given.  The error says what failed, for a warning.
    static Result<MxChannel, std::string> open(const MxResolverOptions& options);

    MxChannel(MxChannel&&) noexcept;
    MxChannel& operator=(MxChannel&&) noexcept;
    ~MxChannel(); // ares_destroy(): pending queries end as ARES_EDESTRUCTION
    MxChannel(const MxChannel&) = delete;
    MxChannel& operator=(const MxChannel&) = delete;

    ares_channeldata* get() const { return channel_; }
    void set_socket_hook(SocketHook hook);
    // The servers in use, as "address:port" (for the log and tests).
    std::vector<std::string> servers() const;

  private:
    struct Hook;
    MxChannel(ares_channeldata* channel, std::unique_ptr<Hook> hook);
    ares_channeldata* channel_ = nullptr;
    std::unique_ptr<Hook> hook_; // its address is c-ares's sock_state_cb data
};

} // namespace cqmgr::qmgr
