#include "control_server.hpp"

#include "cqmgr/control/framing.hpp"
#include "cqmgr/control/reply.hpp"
#include "log.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace cqmgr::qmgr {

std::string ServeError::message() const {
    switch (kind) {
    case Kind::bad_path:
        return "bad socket path: \"" + path + "\"";
    case Kind::owner_ids:
        return call + ": " + detail;
    case Kind::not_a_socket:
        return path + ": exists and is not a socket";
    case Kind::remove:
        return "remove " + path + ": " + detail;
    case Kind::socket:
        return "socket: " + detail;
    case Kind::bind:
        return "bind " + path + ": " + detail;
    case Kind::listen:
        return "listen " + path + ": " + detail;
    }
    return "socket: " + detail;
}

namespace {
using Socket = asio::local::stream_protocol::socket;

// How long to wait before accepting again after accept() failed (out of
// descriptors, say), so that a persistent error does not spin the loop.
constexpr auto accept_retry_delay = std::chrono::seconds(1);

// The user ID of the peer, from the kernel (SO_PEERCRED).
std::optional<uid_t> peer_uid(Socket& sock) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(sock.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
        len != sizeof cred)
        return std::nullopt;
    return cred.uid;
}

// Root's effective ids swapped for another user's while it lives (the
// socket's owner): what is created then is that user's, and no path is
// followed with root's rights.  Going back to root cannot fail for a
// process whose real and saved ids are root; if it did, the process would
// keep running with the wrong identity, a broken invariant.
class OwnerIds {
  public:
    OwnerIds(uid_t uid, gid_t gid) : gid_(::getegid()) {
        if (::setegid(gid) < 0) {
            error_ = {ServeError::Kind::owner_ids,
                      {},
                      "setegid(" + std::to_string(gid) + ")",
                      std::strerror(errno)};
            return;
        }
        if (::seteuid(uid) < 0) {
            error_ = {ServeError::Kind::owner_ids,
                      {},
                      "seteuid(" + std::to_string(uid) + ")",
                      std::strerror(errno)};
            restore_gid();
            return;
        }
        swapped_ = true;
    }
    ~OwnerIds() {
        if (!swapped_) return;
        if (::seteuid(0) < 0)
            log::panic(std::string("control: seteuid(0): ") + std::strerror(errno));
        restore_gid();
    }
    OwnerIds(const OwnerIds&) = delete;
    OwnerIds& operator=(const OwnerIds&) = delete;

    bool ok() const { return swapped_; }
    // Why not, when !ok().
    const ServeError& error() const { return error_; }

  private:
    void restore_gid() {
        if (::setegid(gid_) < 0)
            log::panic(std::string("control: setegid: ") + std::strerror(errno));
    }

    gid_t gid_; // root's effective group, given back
    bool swapped_ = false;
    ServeError error_;
};

// Closes a connection; errors do not matter any more.
void close_quietly(Socket& sock) {
    error_code ignored;
    sock.shutdown(Socket::shutdown_both, ignored);
    sock.close(ignored);
}
} // namespace

class ControlServer::Listener : public std::enable_shared_from_this<Listener> {
  public:
    Listener(asio::io_context& io, Options options, Answer answer, Warn warn)
        : io_(io), options_(std::move(options)), answer_(std::move(answer)), warn_(std::move(warn)),
          acceptor_(io), retry_timer_(io) {}

    Result<void, ServeError> start();
    void stop() {
        stopped_ = true;
        error_code ignored;
        acceptor_.close(ignored);
        retry_timer_.cancel();
    }

    class Session;

    asio::io_context& io_;
    const Options options_;
    const Answer answer_;
    const Warn warn_;
    asio::local::stream_protocol::acceptor acceptor_;
    asio::steady_timer retry_timer_;
    size_t clients_ = 0;
    bool stopped_ = false;

  private:
    void accept();
    void on_accept(Socket sock);
};

// One client connection: reads request lines, answers each and writes its
// reply before it reads the next.  It owns itself through the handlers
// that are pending on it (shared_from_this), so it ends when the client
// goes, a write times out, or a reply says it is the last.
class ControlServer::Listener::Session : public std::enable_shared_from_this<Session> {
  public:
    Session(std::shared_ptr<Listener> listener, Socket sock, uid_t uid, bool counted)
        : listener_(std::move(listener)), sock_(std::move(sock)), timer_(listener_->io_),
          idle_timer_(listener_->io_), uid_(uid), counted_(counted) {
        if (counted_) ++listener_->clients_;
    }
    ~Session() {
        if (counted_) --listener_->clients_;
    }

    // Serves requests until the client goes (or idles too long).
    void serve() {
        wait_idle();
        next();
    }
    // Sends one reply and closes.
    void refuse(std::string reply) { send(std::move(reply), true); }

  private:
    // Answers the next complete line, or reads more.
    void next() {
        if (listener_->stopped_) return close();
        std::string line;
        switch (framer_.next(line)) {
        case control::LineFramer::Status::line:
            waiting_ = false;
            idle_timer_.cancel();
            return send(listener_->answer_(line, uid_), false);
        case control::LineFramer::Status::too_long:
            // The rest of the line is not read: the connection goes.
            return send(control::reply_line(control::error_reply("request too long")), true);
        case control::LineFramer::Status::need_more:
            break;
        }
        sock_.async_read_some(asio::buffer(buf_),
                              [self = shared_from_this()](const error_code& ec, size_t n) {
                                  if (ec) {
                                      // EOF or a broken connection: the client is gone.
                                      self->close();
                                      return;
                                  }
                                  self->framer_.append(std::string_view(self->buf_.data(), n));
                                  self->next();
                              });
    }

    // Writes `reply`; a client that does not take it within the write
    // timeout is dropped.
    void send(std::string reply, bool then_close) {
        out_ = std::move(reply);
        timer_.expires_after(listener_->options_.write_timeout);
        timer_.async_wait([self = shared_from_this()](const error_code& ec) {
            if (!ec) close_quietly(self->sock_); // the write fails and the session ends
        });
        asio::async_write(sock_, asio::buffer(out_),
                          [self = shared_from_this(), then_close](const error_code& ec, size_t) {
                              self->timer_.cancel();
                              if (ec || then_close) {
                                  self->close();
                                  return;
                              }
                              self->wait_idle();
                              self->next();
                          });
    }

    // Ends the connection: no timer keeps the session (and its slot) alive.
    void close() {
        timer_.cancel();
        idle_timer_.cancel();
        close_quietly(sock_);
    }

    // Closes the connection unless a complete request arrives within the
    // idle timeout.  Bytes without a newline do not count: a client that
    // trickles them in is idle too.
    void wait_idle() {
        const auto limit = listener_->options_.idle_timeout;
        if (limit.count() <= 0) return;
        waiting_ = true;
        idle_timer_.expires_after(limit);
        idle_timer_.async_wait([self = shared_from_this()](const error_code& ec) {
            // A request came (perhaps just after the timer went off), or
            // the session is ending.
            if (ec || !self->waiting_) return;
            if (const auto& debug = self->listener_->options_.debug)
                debug("control: closing connection from uid " + std::to_string(self->uid_) +
                      ": no request for " +
                      std::to_string(self->listener_->options_.idle_timeout.count()) + "s");
            close_quietly(self->sock_); // the pending read fails and the session ends
        });
    }

    std::shared_ptr<Listener> listener_;
    Socket sock_;
    asio::steady_timer timer_;      // the reply's write
    asio::steady_timer idle_timer_; // the wait for the next request
    bool waiting_ = false;          // for a request, since wait_idle()
    uid_t uid_;
    bool counted_;
    control::LineFramer framer_;
    std::array<char, control::max_request_bytes> buf_{};
    std::string out_;
};

Result<void, ServeError> ControlServer::Listener::start() {
    using Kind = ServeError::Kind;
    const std::string& path = options_.path;
    if (path.empty() || path.size() >= sizeof(sockaddr_un::sun_path))
        return Failure{ServeError{Kind::bad_path, path, {}, {}}};
    // With root's ids, every path operation below runs with the owner's:
    // the socket is created as the owner's from the start, and nothing
    // planted in the owner's directory can lead root anywhere.
    std::optional<OwnerIds> as_owner;
    if (options_.owner_uid && ::geteuid() == 0) {
        as_owner.emplace(*options_.owner_uid, options_.owner_gid.value_or(::getegid()));
        if (!as_owner->ok()) return Failure{as_owner->error()};
    }
    // A socket left by an earlier process goes; anything else there stays.
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) return Failure{ServeError{Kind::not_a_socket, path, {}, {}}};
        if (::unlink(path.c_str()) < 0 && errno != ENOENT)
            return Failure{ServeError{Kind::remove, path, {}, std::strerror(errno)}};
    }
    error_code ec;
    asio::local::stream_protocol::endpoint ep(path);
    if (acceptor_.open(ep.protocol(), ec); ec)
        return Failure{ServeError{Kind::socket, path, {}, ec.message()}};
    // Mode 0660 as bind() creates it: never a chmod by path afterwards,
    // which a link put in its place in between would redirect.
    const mode_t old_umask = ::umask(0117);
    acceptor_.bind(ep, ec);
    ::umask(old_umask);
    if (ec) return Failure{ServeError{Kind::bind, path, {}, ec.message()}};
    as_owner.reset();
    if (acceptor_.listen(asio::socket_base::max_listen_connections, ec); ec)
        return Failure{ServeError{Kind::listen, path, {}, ec.message()}};
    accept();
    return {};
}

void ControlServer::Listener::accept() {
    acceptor_.async_accept([self = shared_from_this()](const error_code& ec, Socket sock) {
        if (self->stopped_ || ec == asio::error::operation_aborted) return;
        if (ec) {
            // Out of descriptors or memory: try again a little later.
            self->retry_timer_.expires_after(accept_retry_delay);
            self->retry_timer_.async_wait([self](const error_code& tec) {
                if (!tec && !self->stopped_) self->accept();
            });
            return;
        }
        self->on_accept(std::move(sock));
        self->accept();
    });
}

void ControlServer::Listener::on_accept(Socket sock) {
    std::optional<uid_t> uid = peer_uid(sock);
    bool allowed = uid && std::find(options_.allowed.begin(), options_.allowed.end(), *uid) !=
                              options_.allowed.end();
    if (!allowed) {
        if (warn_)
            warn_("control: connection from uid " +
                  (uid ? std::to_string(*uid) : std::string("unknown")) + " refused");
        std::make_shared<Session>(shared_from_this(), std::move(sock), uid.value_or(uid_t(-1)),
                                  false)
            ->refuse(control::reply_line(control::error_reply("permission denied")));
        return;
    }
    if (clients_ >= options_.max_clients) {
        std::make_shared<Session>(shared_from_this(), std::move(sock), *uid, false)
            ->refuse(control::reply_line(control::error_reply("too many control connections")));
        return;
    }
    std::make_shared<Session>(shared_from_this(), std::move(sock), *uid, true)->serve();
}

ControlServer::ControlServer(asio::io_context& io, Options options, Answer answer, Warn warn)
    : listener_(
          std::make_shared<Listener>(io, std::move(options), std::move(answer), std::move(warn))) {}

ControlServer::~ControlServer() {
    listener_->stop();
}

Result<void, ServeError> ControlServer::start() {
    return listener_->start();
}

void ControlServer::stop() {
    listener_->stop();
}

size_t ControlServer::clients() const {
    return listener_->clients_;
}

} // namespace cqmgr::qmgr
